#!/usr/bin/env bash
# make fuzz: run every fuzz target for FUZZTIME each (default 20s) against a private local stack
# (some targets send requests to the real handlers). `make test` already runs their seed corpora.
# Then the hardening campaign's replay (shared/app TestCampaign) at its larger size.
set -euo pipefail
cd "$(dirname "$0")/.."
export DDB_PORT="${FUZZ_DDB_PORT:-18900}" SQS_PORT="${FUZZ_SQS_PORT:-19900}" STATE_DIR="$PWD/.local/fuzz-run"
trap 'infra/stack/stack.sh stop >/dev/null 2>&1 || true' EXIT
infra/tools.sh
infra/stack/stack.sh start
eval "$(infra/stack/stack.sh env)"
export REQUIRE_STACK=1 TEST_LOG=
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "== $pkg $target"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "${FUZZTIME:-20s}" "$pkg" 2>&1 | grep -vE '^(\{|fuzz: elapsed)' | tail -8
  done
done
echo "== campaign (CAMPAIGN=large)"
CAMPAIGN=large go test -count=1 -run '^TestCampaign$' ./shared/app
