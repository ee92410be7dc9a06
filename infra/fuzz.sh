#!/usr/bin/env bash
# make fuzz: run every fuzz target for FUZZTIME each (default 20s) against a private local stack
# (some targets send requests to the real handlers). `make test` already runs their seed corpora.
# Then the hardening campaign's replay (shared/platform/api TestCampaign) at its larger size.
set -euo pipefail
cd "$(dirname "$0")/.."
. infra/stack/private.sh
private fuzz "${FUZZ_DDB_PORT:-18900}" "${FUZZ_SQS_PORT:-19900}"
export TEST_LOG=
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "== $pkg $target"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "${FUZZTIME:-20s}" "$pkg" 2>&1 | grep -vE '^(\{|fuzz: elapsed)' | tail -8
  done
done
echo "== campaign (CAMPAIGN=large)"
CAMPAIGN=large go test -count=1 -run '^TestCampaign$' ./shared/platform/api
