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
  # The slowest builds need no stack: Terraform with the provider, and the functions' zips for
  # the emulator. Their tests that only build start now, in the background, and the same tests
  # in go test below wait on the build's lock, so on a fresh machine the builds overlap the
  # static checks and the stack's start instead of following them.
  mkdir -p .local
  setsid go test -count=1 -timeout 40m -run '^(TestToolsBuild|TestZipsHoldAnExecutableBootstrap)$' ./infra/terraform ./infra/coldstart \
    >.local/prebuild.log 2>&1 &
  prebuild=$!
  # frps and frpc from source (shared/testing/frptest waits on this build's lock).
  setsid infra/frp/build.sh >.local/frp-build.log 2>&1 &
  frpbuild=$!
  trap 'kill -- -$prebuild -$frpbuild 2>/dev/null || true' EXIT # their groups: go test, test binaries, builds
  echo "== gofmt"
  unformatted=$(gofmt -l functions shared infra)
  [ -z "$unformatted" ] || { printf 'gofmt: not formatted (run gofmt -w):\n%s\n' "$unformatted" >&2; exit 1; }
fi
echo "== go vet (${SECONDS}s)"
go vet "${packages[@]}"
if [ $# -eq 0 ]; then
  echo "== staticcheck (${SECONDS}s)"
  go tool staticcheck ./...
  echo "== cfn-lint (${SECONDS}s; template.yaml through AWS's SAM transform; .cfnlintrc)"
  infra/tools.sh
  cfn-lint
fi
. infra/stack/private.sh
private test "${TEST_DDB_PORT:-18700}" "${TEST_SQS_PORT:-19700}"
# Tests that need a rate limit set their own; every other request is unlimited unless asked for.
export RATE_LIMIT="${RATE_LIMIT:-off}"
echo "== go test (${SECONDS}s)"
go test -count=1 -timeout 20m ${GO_TEST_FLAGS:-} "${packages[@]}"
if [ $# -eq 0 ] && ! wait $prebuild; then
  echo "the background build failed:" >&2
  cat .local/prebuild.log >&2
  exit 1
fi
echo "== passed (${SECONDS}s)"
