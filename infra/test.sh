#!/usr/bin/env bash
# make test: the static checks (gofmt, go vet, staticcheck pinned by go.mod's tool directive,
# cfn-lint on template.yaml), then a private local stack (infra/stack/private.sh), every test
# against it, and the stack stopped again. With package patterns as arguments
# (infra/test.sh ./shared/app/...), go vet and the tests of those only.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=("$@")
[ ${#packages[@]} -gt 0 ] || packages=(./...)
if [ $# -eq 0 ]; then
  echo "== gofmt"
  unformatted=$(gofmt -l functions shared infra)
  [ -z "$unformatted" ] || { printf 'gofmt: not formatted (run gofmt -w):\n%s\n' "$unformatted" >&2; exit 1; }
fi
echo "== go vet"
go vet "${packages[@]}"
if [ $# -eq 0 ]; then
  echo "== staticcheck"
  go tool staticcheck ./...
  echo "== cfn-lint (template.yaml through AWS's SAM transform; .cfnlintrc)"
  infra/tools.sh
  cfn-lint
fi
. infra/stack/private.sh
private test "${TEST_DDB_PORT:-18700}" "${TEST_SQS_PORT:-19700}"
# Tests that need a rate limit set their own; every other request is unlimited unless asked for.
export RATE_LIMIT="${RATE_LIMIT:-off}"
echo "== go test"
go test -count=1 -timeout 20m ${GO_TEST_FLAGS:-} "${packages[@]}"
