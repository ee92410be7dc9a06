#!/usr/bin/env bash
# make bench: start a private local stack (like make test), run every benchmark against it, and
# stop it again. The delivery benchmarks report mutation-to-delivery latency (p50_ms, p90_ms)
# and the worker's Kinesis delivery rate as a share of the stand-in's raw PutRecords rate
# (worker/raw).
set -euo pipefail
cd "$(dirname "$0")/.."
export DDB_PORT="${TEST_DDB_PORT:-18700}" SQS_PORT="${TEST_SQS_PORT:-19700}" STATE_DIR="$PWD/.local/bench-run"
stack() { infra/stack/stack.sh "$@"; }
trap 'stack stop >/dev/null 2>&1 || true' EXIT
stack start
eval "$(stack env)"
export REQUIRE_STACK=1
go test -run '^$' -bench . ${GO_BENCH_FLAGS:-} ./...
