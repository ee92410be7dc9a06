#!/usr/bin/env bash
# Builds frp's server and client (frps, frpc) at the version this folder's go.mod pins, from
# source with `-tags noweb` (no dashboard assets), into .local/bin/ of the checkout, unless both
# are already there at that version. One build at a time: a second caller (make test's
# background prebuild, a test binary, make run) waits on the lock and then finds them built.
#
# Usage: infra/frp/build.sh          (prints nothing when the binaries are current)
# Environment: FRP_BUILD_TIMEOUT  seconds to wait for another build's lock (default 1800)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN="$ROOT/.local/bin"
# The version go.mod requires, without the v: what `frps --version` prints.
want="$(sed -n 's|^[[:space:]]*github.com/fatedier/frp v\([^ ]*\).*$|\1|p' "$HERE/go.mod")"
[ -n "$want" ] || { echo "frp: no github.com/fatedier/frp requirement in $HERE/go.mod" >&2; exit 1; }

current() {
  local b
  for b in frps frpc; do
    [ -x "$BIN/$b" ] && [ "$("$BIN/$b" --version 2>/dev/null)" = "$want" ] || return 1
  done
}

current && exit 0
mkdir -p "$BIN"
exec 9>"$ROOT/.local/frp-build.lock"
flock -w "${FRP_BUILD_TIMEOUT:-1800}" 9 || { echo "frp: timed out waiting for $ROOT/.local/frp-build.lock" >&2; exit 1; }
current && exit 0
echo "frp: building frps and frpc $want from source (go build -tags noweb) into ${BIN#"$ROOT"/}" >&2
# Built beside the destination and renamed into place, so an interrupted build leaves nothing
# that looks finished.
tmp="$(mktemp -d "$BIN/.frp-build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
(cd "$HERE" && GOWORK=off GOFLAGS=-mod=readonly go build -tags noweb -trimpath -ldflags "-s -w" \
  -o "$tmp/" github.com/fatedier/frp/cmd/frps github.com/fatedier/frp/cmd/frpc)
for b in frps frpc; do
  [ "$("$tmp/$b" --version)" = "$want" ] || { echo "frp: the built $b does not report version $want" >&2; exit 1; }
  mv -f "$tmp/$b" "$BIN/$b"
done
echo "frp: built frps and frpc $want in $((SECONDS - start))s" >&2
