#!/usr/bin/env bash
# make bench: the performance goals, each measured as a ratio against its baseline in the same
# run (interleaved), against a private local stack. DynamoDB Local runs with its full JIT here
# (the test stack trades steady-state speed for a faster start).
set -euo pipefail
cd "$(dirname "$0")/.."
export DDB_JAVA_OPTS="${DDB_JAVA_OPTS:--Xmx512m}"
. infra/stack/private.sh
private bench "${BENCH_DDB_PORT:-18800}" "${BENCH_SQS_PORT:-19800}"
export ZIP_CHECK=1
out=.local/bench.txt
echo "== zip sizes (limit 5 MB each; and none larger than at 8b3ee26, main before issue 21: the test fails otherwise)"
go test -count=1 -run TestZipSizes -v ./infra/coldstart | grep -E "zip|FAIL|PASS|ok" || true
echo "== benchmarks"
go test -count=1 -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-300x}" -timeout 30m ./... 2>&1 | grep -vE '^\{' | tee "$out" | grep -E '^(Benchmark|ok|FAIL|---)' || true
echo "== ratios (goal in parentheses where the issue sets one)"
# The issue's goals, by benchmark: GET ≤ 1.10× its consistent BatchGetItem, POST /api_keys ≤ 1.15×
# its TransactWriteItems (over the local server's HTTP and as a function's handler); a function's
# cold start ≤ 1.5× hello-world's and no slower than the same function's at 8b3ee26 (≤ 1.00,
# within the noise of a shared machine: compare runs); frps's Ping ≤ 1.0× a GET, both as their
# Lambdas serve them (issue 38).
awk 'BEGIN { goal["get"] = "1.10"; goal["get-lambda"] = "1.10"; goal["create"] = "1.15"; goal["create-lambda"] = "1.15" }
  /^Benchmark/ { for (i = 2; i <= NF; i++) if ($i ~ /ratio/) {
    n = split($1, part, "/"); sub(/-[0-9]+$/, "", part[n]); g = ""
    if ($1 ~ /RequestsVsBareOperations/ && part[n] in goal) g = "(goal <= " goal[part[n]] ")"
    if ($1 ~ /^BenchmarkPlugin\/ping/) g = "(goal <= 1.0, vs a GET)"
    if ($1 ~ /^BenchmarkPlugin\/login/) g = "(vs a GET)"
    if ($1 ~ /^BenchmarkColdStart\//) g = "(goal <= 1.5, vs hello-world)"
    if ($1 ~ /^BenchmarkColdStartVsBefore\//) g = "(goal <= 1.00, vs 8b3ee26)"
    printf "%-60s %8s %-24s %s\n", $1, $(i-1), $i, g } }' "$out"
echo "== commit -> delivery and list alternatives (p50/p99, µs or ms as named)"
grep -E '^Benchmark(CommitToDelivery|ListAlternatives)' "$out" || true
echo "== cost per request (BenchmarkCostPerRequest; prices in infra/cost/prices.go)"
sed -n '/cost per request kind/,/^$/p' "$out" | sed 's/^Benchmark[^ ]* *//' || true
echo "== load: 16 clients of mixed CRUD on the local server, this tree vs 2800fb0 alternated (medians of LOAD_ROUNDS rounds of LOAD_DURATION; goal ratio >= 0.98)"
grep -E '^BenchmarkLoadVs2800fb0|load_test.go:[0-9]+: round' "$out" || true
