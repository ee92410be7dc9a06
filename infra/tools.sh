#!/usr/bin/env bash
# Installs the command-line tools the tests drive for real, when the machine lacks them.
set -euo pipefail
need=()
command -v openssl >/dev/null || need+=(openssl)
command -v ssh-keygen >/dev/null || need+=(openssh-client)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
if [ ${#need[@]} -gt 0 ]; then
  echo "tools: installing ${need[*]}"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null) ||
    { echo "tools: could not install ${need[*]}" >&2; exit 1; }
fi
# AWS's CloudFormation linter; it runs the real SAM transform (aws-sam-translator, which it
# requires) before linting, and infra/samtemplate runs that transform too.
CFN_LINT_VERSION=1.51.0
if ! command -v cfn-lint >/dev/null || ! python3 -c 'import samtranslator, cfnlint' 2>/dev/null; then
  echo "tools: installing cfn-lint==$CFN_LINT_VERSION"
  python3 -m pip install -q "cfn-lint==$CFN_LINT_VERSION" >&2 ||
    { echo "tools: cfn-lint is missing: install it with 'python3 -m pip install cfn-lint==$CFN_LINT_VERSION' (Python 3.9 or later; it brings aws-sam-translator)" >&2; exit 1; }
fi
have=$(cfn-lint --version 2>/dev/null | awk '{print $2}')
[ "$have" = "$CFN_LINT_VERSION" ] || echo "tools: cfn-lint $have here, the tests are kept clean with $CFN_LINT_VERSION" >&2
