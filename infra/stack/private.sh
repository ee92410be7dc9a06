# Sourced by the scripts that run against a local stack of their own (make test, bench, fuzz,
# chaos), so that a `make run` in another terminal is untouched:
#   private NAME DDB_PORT SQS_PORT
# installs the tools, starts the stack on those ports with its state in .local/NAME-run, exports
# its environment (REQUIRE_STACK=1, the tools on PATH) and stops it when the script exits (after
# any exit trap the script set before).
private() {
  export DDB_PORT="$2" SQS_PORT="$3" STATE_DIR="$PWD/.local/$1-run"
  local earlier # the script's own exit trap, kept
  earlier=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
  trap "infra/stack/stack.sh stop >/dev/null 2>&1 || true${earlier:+; $earlier}" EXIT
  infra/tools.sh
  infra/stack/stack.sh start
  eval "$(infra/stack/stack.sh env)"
  export REQUIRE_STACK=1 PATH="$PWD/.local/bin:$PATH"
}
