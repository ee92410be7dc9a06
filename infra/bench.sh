#!/usr/bin/env bash
# make bench: start a private local stack (its own ports and state folder), run every benchmark
# against it (no tests), and stop it again. Benchmarks report their results as metrics (p50s,
# ratios) next to Go's own.
set -euo pipefail
cd "$(dirname "$0")/.."
export DDB_PORT="${BENCH_DDB_PORT:-${TEST_DDB_PORT:-18702}}" SQS_PORT="${BENCH_SQS_PORT:-${TEST_SQS_PORT:-19702}}" STATE_DIR="$PWD/.local/bench-run"
stack() { infra/stack/stack.sh "$@"; }
trap 'stack stop >/dev/null 2>&1 || true' EXIT
infra/tools.sh
stack start
eval "$(stack env)"
export REQUIRE_STACK=1 PATH="$PWD/.local/bin:$PATH"
go test -count=1 -run '^$' -bench "${BENCH:-.}" -timeout 30m ${GO_BENCH_FLAGS:-} ./...
