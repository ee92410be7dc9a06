#!/usr/bin/env bash
# make chaos: the fault tests (shared/testing/chaos) at their acceptance size against a private
# local stack: CHAOS_HISTORIES histories (default 50) of 200 operations by 8 clients for each
# fault class. `make test` runs them with one history per class.
set -euo pipefail
cd "$(dirname "$0")/.."
. infra/stack/private.sh
private chaos "${CHAOS_DDB_PORT:-18950}" "${CHAOS_SQS_PORT:-19950}"
export RATE_LIMIT=off TEST_LOG=
go test -count=1 -v -timeout 0 ./shared/testing/chaos/ -args -chaos.histories="${CHAOS_HISTORIES:-50}" 2>&1 | grep -vE '^(=== |\{)'
