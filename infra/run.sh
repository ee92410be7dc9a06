#!/usr/bin/env bash
# make run: start DynamoDB Local and the SQS emulator, build frps and frpc (infra/frp), then the
# all-in-one server in the foreground, which starts frps beside it; Ctrl-C stops the server and
# whatever this script started.
set -euo pipefail
cd "$(dirname "$0")/.."
infra/frp/build.sh
export PATH="$PWD/.local/bin:$PATH"
started=0
if ! infra/stack/stack.sh status >/dev/null 2>&1; then started=1; fi
infra/stack/stack.sh start
eval "$(infra/stack/stack.sh env)"
# No per-account rate limit locally unless asked for (RATE_LIMIT=120/60 make run).
export RATE_LIMIT="${RATE_LIMIT:-off}"
cleanup() { if [ "$started" = 1 ]; then infra/stack/stack.sh stop || true; fi; }
trap cleanup EXIT
trap "exit 0" INT TERM
go run ./infra/local serve
