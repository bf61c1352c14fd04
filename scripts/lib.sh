# lib.sh: what scripts/bench.sh and scripts/bench-tail.sh share (sourced,
# not run): messages, the work directory and the servers it started, the
# vigil-server binary, free ports and starting a server. The sourcing script
# sets prog (its name, for messages) first.

die() { echo "$prog: $*" >&2; exit 1; }

need() {
  command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"
}

# need_tools checks redis-benchmark, redis-cli and awk, and sets
# REDIS_SERVER_BIN (default: redis-server on PATH).
need_tools() {
  need redis-benchmark "install it with: apt-get install -y redis-tools"
  need redis-cli "install it with: apt-get install -y redis-tools"
  need awk "install gawk or mawk"
  REDIS_SERVER_BIN="${REDIS_SERVER_BIN:-$(command -v redis-server || true)}"
  [ -n "$REDIS_SERVER_BIN" ] && [ -x "$REDIS_SERVER_BIN" ] ||
    die "redis-server not found: install it with: apt-get install -y redis-server"
}

# setup_work makes $work and stops the servers in $pids and removes $work
# on exit; a function named on_exit, if the script defines one, runs first.
setup_work() {
  work="$(mktemp -d "${TMPDIR:-/tmp}/vigil-$prog.XXXXXX")"
  pids=()
  trap cleanup EXIT
  trap 'exit 130' INT TERM
}

cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if declare -F on_exit >/dev/null; then on_exit; fi
  rm -rf "$work"
}

# vigil_binary sets vigil: VIGIL_SERVER_BIN, or a vigil-server built from
# the checkout this script is in.
vigil_binary() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  if [ -n "${VIGIL_SERVER_BIN:-}" ]; then
    vigil="$VIGIL_SERVER_BIN"
    [ -x "$vigil" ] || die "VIGIL_SERVER_BIN=$vigil is not executable"
  else
    need go "install Go from https://go.dev/dl/"
    echo "building vigil-server..." >&2
    (cd "$root" && go build -o "$work/vigil-server" ./cmd/vigil-server) || die "go build ./cmd/vigil-server failed"
    vigil="$work/vigil-server"
    # Out of the page cache, to be read back as an installed binary is:
    # the linker's pages are cached in large folios, which a fault maps
    # whole, and the startup pages vigil-server drops once ready came back
    # (10 MB more RSS than the same binary installed).
    sync "$vigil" 2>/dev/null || sync
    dd if="$vigil" iflag=nocache count=0 status=none 2>/dev/null || true
  fi
}

# free_port prints a loopback TCP port nobody listens on: from PORT_BASE up
# when it is set, else a random one in 20000-31999 (below Linux's ephemeral
# range, 32768-60999, where outgoing connections take ports).
next_port="${PORT_BASE:-}"
free_port() {
  local port i
  for i in $(seq 1 200); do
    if [ -n "$next_port" ]; then
      port="$next_port"
      next_port=$((next_port + 1))
    else
      port=$(( (RANDOM << 15 | RANDOM) % 12000 + 20000 ))
    fi
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  die "no free port found"
}

# start NAME BIN [ARGS...]: starts a server (--save '' --appendonly no, in
# $work/NAME) and waits until it answers PING; sets the global variable
# port_NAME. A server that exits at startup (another process took the port
# meanwhile) is tried again on another port.
start() {
  local name="$1" bin="$2" port pid i try
  shift 2
  mkdir -p "$work/$name"
  for try in 1 2 3; do
    free_port >"$work/port"
    port="$(cat "$work/port")"
    [ -n "$next_port" ] && next_port=$((port + 1))
    "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$work/$name" --logfile '' "$@" >"$work/$name.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    for i in $(seq 1 200); do
      if [ "$(redis-cli -p "$port" PING 2>/dev/null)" = PONG ]; then
        printf -v "port_$name" '%s' "$port"
        echo "$name: $bin on port $port (pid $pid)" >&2
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
      cat "$work/$name.log" >&2
      die "$name did not answer PING on port $port"
    fi
    echo "$name exited at startup on port $port (try $try):" >&2
    cat "$work/$name.log" >&2
  done
  die "$name exited at startup"
}
