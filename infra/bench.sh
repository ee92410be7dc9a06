#!/usr/bin/env bash
# make bench: the performance goals, each measured as a ratio against its baseline in the same
# run (interleaved), against a private local stack. DynamoDB Local runs with its full JIT here
# (the test stack trades steady-state speed for a faster start). The run's output is kept in
# .local/bench.txt; infra/benchreport prints each goal beside its figure from it, and a line
# per function with its zip's size and its cold start.
set -euo pipefail
cd "$(dirname "$0")/.."
export DDB_JAVA_OPTS="${DDB_JAVA_OPTS:--Xmx512m}"
. infra/stack/private.sh
private bench "${BENCH_DDB_PORT:-18800}" "${BENCH_SQS_PORT:-19800}"
export ZIP_CHECK=1
out=.local/bench.txt
echo "== zip sizes (TestZipSizes: each function's zip, at most 5 MB)"
go test -count=1 -run TestZipSizes -v ./infra/coldstart >"$out" 2>&1 || true
grep -E "^(--- |FAIL|ok)|over 5 MB" "$out" || true
echo "== benchmarks"
go test -count=1 -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-300x}" -timeout 30m ./... 2>&1 | grep -vE '^\{' | tee -a "$out" | grep -E '^(Benchmark|ok|FAIL|---)' || true
go run ./infra/benchreport "$out"
echo "== commit -> delivery and list alternatives (p50/p99, µs or ms as named)"
grep -E '^Benchmark(CommitToDelivery|ListAlternatives)' "$out" || true
echo "== cost per request (BenchmarkCostPerRequest; prices in infra/cost/prices.go)"
sed -n '/cost per request kind/,/^$/p' "$out" | sed 's/^Benchmark[^ ]* *//' || true
echo "== load: 16 clients of mixed CRUD on the local server, this tree vs 2800fb0 alternated (medians of LOAD_ROUNDS rounds of LOAD_DURATION; goal ratio >= 0.98)"
grep -E '^BenchmarkLoadVs2800fb0|load_test.go:[0-9]+: round' "$out" || true
