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
