#!/usr/bin/env bash
# make chaos: the fault tests (shared/testing/chaos) at their acceptance size against a private
# local stack: CHAOS_HISTORIES histories (default 50) of 200 operations by 8 clients for each
# fault class. `make test` runs them with one history per class.
set -euo pipefail
cd "$(dirname "$0")/.."
export DDB_PORT="${CHAOS_DDB_PORT:-18950}" SQS_PORT="${CHAOS_SQS_PORT:-19950}" STATE_DIR="$PWD/.local/chaos-run"
trap 'infra/stack/stack.sh stop >/dev/null 2>&1 || true' EXIT
infra/tools.sh
infra/stack/stack.sh start
eval "$(infra/stack/stack.sh env)"
export REQUIRE_STACK=1 RATE_LIMIT=off TEST_LOG=
go test -count=1 -v -timeout 0 ./shared/testing/chaos/ -args -chaos.histories="${CHAOS_HISTORIES:-50}" 2>&1 | grep -vE '^(=== |\{)'
