#!/usr/bin/env bash
# make bench: start a private local stack, run the benchmarks against it, and print the ratios
# the issues ask for (restricted ns/op divided by unrestricted ns/op; goal <= 1.2).
set -euo pipefail
cd "$(dirname "$0")/.."
export DDB_PORT="${BENCH_DDB_PORT:-18710}" SQS_PORT="${BENCH_SQS_PORT:-19710}" STATE_DIR="$PWD/.local/bench-run"
stack() { infra/stack/stack.sh "$@"; }
trap 'stack stop >/dev/null 2>&1 || true' EXIT
infra/tools.sh
stack start
eval "$(stack env)"
export REQUIRE_STACK=1 PATH="$PWD/.local/bin:$PATH"
out="$(mktemp)"
go test -run '^$' -bench 'BenchmarkRequest(NoRestriction|Restriction1000Rules|RestrictionRatio)$' \
  -benchtime "${BENCHTIME:-2000x}" -count 1 ./shared/iprestrict/ 2>&1 | grep -v '^{' | tee "$out"
awk '
  /^BenchmarkRequestNoRestriction/        { plain = $3 }
  /^BenchmarkRequestRestriction1000Rules/ { restricted = $3 }
  /^BenchmarkRequestRestrictionRatio/     { for (i = 1; i < NF; i++) if ($(i+1) == "ratio") interleaved = $i }
  END {
    if (plain > 0 && restricted > 0) printf "ratio restriction1000rules/norestriction: %.3f (%s / %s ns/op)\n", restricted / plain, restricted, plain
    if (interleaved != "") printf "ratio interleaved (same moment of the stack): %s\n", interleaved
  }' "$out"
rm -f "$out"
