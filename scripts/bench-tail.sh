#!/usr/bin/env bash
# bench-tail.sh: tail latency of vigil-server against Debian's redis-server in
# the same run (issue 24): redis-benchmark's p99, p99.9 and max for GET, SET,
# LPUSH and ZADD at -c 50, -P 1 and -P 16, with an empty keyspace and with
# 1 M keys loaded (the keys redis-benchmark -r draws, so GET hits them).
#
#   scripts/bench-tail.sh                 # defaults below
#   ROUNDS=5 scripts/bench-tail.sh        # more rounds
#   LOADS=1000000 scripts/bench-tail.sh   # only the loaded keyspace
#
# Environment:
#   ROUNDS   rounds (default 3). In a round each test runs against both
#            servers back to back, the order alternating, so each pair is
#            measured within seconds on the same machine
#   LOADS    keyspace sizes to run with (default "0 1000000"); the keys are
#            key:%012d, loaded with redis-cli --pipe, values of 3 bytes
#   DEPTHS   the -P depths to run (default "1 16"; -P 16 runs N16 requests,
#            any other depth N1)
#   N1, N16  requests per test at -P 1 / -P 16 (default 100000 / 400000)
#   CLIENTS  -c (default 50)
#   TESTS    -t list (default get,set,lpush,zadd)
#   RANDOM_KEYS  -r (default 1000000)
#   VIGIL_SERVER_BIN, REDIS_SERVER_BIN, GOMAXPROCS, VIGIL_SPIN_US, GOGC,
#   GODEBUG  as for scripts/bench.sh; vigil-server inherits the environment
#   VIGIL_ARGS  extra vigil-server arguments
#   VIGIL_LOG   copy vigil-server's log there at exit (with GODEBUG=gctrace=1:
#               one line per collection, to match against the tail)
#   PORT_BASE   take the servers' ports from PORT_BASE up (default: random
#               free ports in 20000-31999)
#
# It prints, per keyspace, depth and test, each server's median over the
# rounds of p99, p99.9 and max (ms), then vigil/redis: the median of the
# rounds' paired ratios and the worst. The targets (README, Performance):
# p99 <= 1.0x, max <= 2x. p99.9 is redis-benchmark's first percentile line at
# or above 99.9% (99.902% with enough requests).
set -euo pipefail

ROUNDS="${ROUNDS:-3}"
LOADS="${LOADS:-0 1000000}"
DEPTHS="${DEPTHS:-1 16}"
N1="${N1:-100000}"
N16="${N16:-400000}"
CLIENTS="${CLIENTS:-50}"
TESTS="${TESTS:-get,set,lpush,zadd}"
RANDOM_KEYS="${RANDOM_KEYS:-1000000}"

prog=bench-tail.sh
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_tools
setup_work
# on_exit (lib.sh's cleanup calls it): keep vigil-server's log.
on_exit() {
  if [ -n "${VIGIL_LOG:-}" ] && [ -f "$work/vigil.log" ]; then cp "$work/vigil.log" "$VIGIL_LOG"; fi
}
vigil_binary

# shellcheck disable=SC2086
start redis "$REDIS_SERVER_BIN"
# shellcheck disable=SC2086
start vigil "$vigil" ${VIGIL_ARGS:-}
echo "redis-server: $("$REDIS_SERVER_BIN" --version)" >&2
echo "vigil-server: $("$vigil" --version | tr '\n' ' ')" >&2
echo "host: $(nproc) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "GOMAXPROCS=${GOMAXPROCS:-unset} VIGIL_SPIN_US=${VIGIL_SPIN_US:-unset} GOGC=${GOGC:-unset} GODEBUG=${GODEBUG:-unset}" >&2

# load N: both servers hold exactly keys key:000000000000 .. key:N-1.
load() {
  local n="$1" name port
  if [ "$n" -gt 0 ] && [ ! -s "$work/load.$n" ]; then
    awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$3\r\nxxx\r\n", i }' >"$work/load.$n"
  fi
  for name in redis vigil; do
    port="port_$name"
    redis-cli -p "${!port}" FLUSHALL >/dev/null
    if [ "$n" -gt 0 ]; then
      redis-cli -p "${!port}" --pipe <"$work/load.$n" >/dev/null
    fi
    echo "$name: $(redis-cli -p "${!port}" DBSIZE) keys" >&2
  done
}

# bench NAME LOAD P TEST ROUND: one redis-benchmark run; appends
# "load P test name round p99 p999 max" to $work/results.
bench() {
  local name="$1" ld="$2" p="$3" test="$4" round="$5" port n out
  port="port_$name"
  n="$N1"
  [ "$p" = 16 ] && n="$N16"
  out="$(redis-benchmark -p "${!port}" -c "$CLIENTS" -P "$p" -n "$n" -r "$RANDOM_KEYS" -t "$test" 2>&1 | tr '\r' '\n')"
  echo "$out" | awk -v ld="$ld" -v p="$p" -v t="$test" -v name="$name" -v r="$round" '
    /Latency by percentile distribution/ { inpct = 1; next }
    inpct && /^[0-9.]+% <=/ { pct = $1; sub("%", "", pct); if (pct + 0 >= 99.9 && p999 == "") p999 = $3; next }
    /^Cumulative/ { inpct = 0 }
    /avg +min +p50 +p95 +p99 +max/ { getline; p99 = $5; mx = $6 }
    END {
      if (p99 == "" || p999 == "") { print "no latency summary for " t > "/dev/stderr"; exit 1 }
      print ld, p, t, name, r, p99, p999, mx
    }' >>"$work/results"
}

IFS=, read -r -a tests <<<"$TESTS"
for ld in $LOADS; do
  load "$ld"
  for round in $(seq 1 "$ROUNDS"); do
    for p in $DEPTHS; do
      i=0
      for test in "${tests[@]}"; do
        if [ $(( (i + round) % 2 )) = 0 ]; then order="redis vigil"; else order="vigil redis"; fi
        for name in $order; do bench "$name" "$ld" "$p" "$test" "$round"; done
        i=$((i + 1))
      done
    done
    echo "keyspace $ld: round $round done" >&2
  done
done

echo
echo "Tail latency, redis-benchmark -c $CLIENTS -r $RANDOM_KEYS, $ROUNDS rounds (ms: medians of the rounds; ratio vigil/redis: median of the rounds' pairs (worst))"
awk '
  function med(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { k = $1 SUBSEP $2 SUBSEP $3; v[k, $4, $5, 1] = $6; v[k, $4, $5, 2] = $7; v[k, $4, $5, 3] = $8
    if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
    if ($5 > rounds) rounds = $5 }
  END {
    printf "%-8s %-3s %-6s | %-22s | %-22s | %-32s\n", "keys", "P", "test", "redis p99/p99.9/max", "vigil p99/p99.9/max", "vigil/redis p99 | p99.9 | max"
    for (x = 1; x <= nk; x++) {
      k = order[x]; split(k, f, SUBSEP)
      line = sprintf("%-8s %-3s %-6s |", f[1], f[2], f[3])
      for (s = 1; s <= 2; s++) {
        name = s == 1 ? "redis" : "vigil"
        for (m = 1; m <= 3; m++) { n = 0; for (r = 1; r <= rounds; r++) if ((k, name, r, m) in v) a[++n] = v[k, name, r, m]; med_[m] = med(a, n) }
        line = line sprintf(" %6.3f %6.3f %7.3f |", med_[1], med_[2], med_[3])
      }
      for (m = 1; m <= 3; m++) {
        n = 0; w = 0
        for (r = 1; r <= rounds; r++) if ((k, "vigil", r, m) in v && v[k, "redis", r, m] > 0) {
          q = v[k, "vigil", r, m] / v[k, "redis", r, m]; a[++n] = q; if (q > w) w = q
        }
        line = line sprintf(" %4.2f (%4.2f)", med(a, n), w)
        all[m, ++cnt[m]] = med(a, n)
      }
      print line
    }
    for (m = 1; m <= 3; m++) { n = 0; lg = 0; for (i = 1; i <= cnt[m]; i++) lg += log(all[m, i]); gm[m] = exp(lg / cnt[m]) }
    printf "geomean of the medians vigil/redis: p99 %.2f, p99.9 %.2f, max %.2f\n", gm[1], gm[2], gm[3]
  }' "$work/results"
