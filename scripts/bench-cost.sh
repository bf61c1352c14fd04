#!/usr/bin/env bash
# bench-cost.sh: what one request costs each side, measured with perf stat
# over a fixed number of requests, robust to a shared machine's noise
# (throughput is not): the server's and redis-benchmark's CPU time per
# request, their context switches and the system calls that matter per
# request (epoll, read/recvmsg, write, futex, sched_yield, nanosleep).
#
#   scripts/bench-cost.sh N TESTS NAME:PORT:PID ...
#   scripts/bench-cost.sh 200000 set,get,zadd vigil:27002:1234 redis:27001:1235
#
# Each test runs redis-benchmark -n N -c 50 -P 1 -r 100000 -t TEST against
# every running server given (FLUSHALL first), one after the other. Start
# the servers yourself (outside the CPU lock); run this under it. Needs perf
# with the syscalls tracepoints (root, or perf_event_paranoid <= 1).
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
N=$1 T=$2
shift 2
EV=task-clock,context-switches
for s in epoll_wait epoll_pwait read recvmsg write futex sched_yield nanosleep; do
  EV+=",syscalls:sys_enter_$s"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in ${T//,/ }; do
  for spec in "$@"; do
    IFS=: read -r name port pid <<<"$spec"
    redis-cli -p "$port" FLUSHALL >/dev/null
    perf stat -x, -e "$EV" -p "$pid" -o "$tmp/srv" &
    sp=$!
    sleep 0.2
    perf stat -x, -e "$EV" -o "$tmp/cli" redis-benchmark -p "$port" -n "$N" -c 50 -P 1 -r 100000 -t "$t" -q >"$tmp/bench" 2>&1
    kill -INT "$sp"
    wait "$sp" || true
    rps=$(tr '\r' '\n' <"$tmp/bench" | grep -o '[0-9.]* requests per second' | awk '{print $1}')
    echo "== $t $name: $rps requests/s"
    for side in srv cli; do
      awk -F, -v n="$N" -v side="$side" '/^[0-9]/ {
        k = split($3, a, ":"); ev = a[k]; sub(/^sys_enter_/, "", ev)
        if ($3 == "task-clock") printf "%s: %.2f us CPU", side, $1 * 1000 / n
        else if ($1 > 0) printf ", %s %.3f", ev, $1 / n
      } END { print " (per request)" }' "$tmp/$side"
    done
  done
done
