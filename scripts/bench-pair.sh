#!/usr/bin/env bash
# bench-pair.sh: redis-server and one or more vigil-server variants (builds
# or settings) side by side in one run, short redis-benchmark runs with the
# order rotating from round to round, and what each run cost each side:
# throughput, latency (p50, p99, max), the client's and the server's CPU per
# request, and how busy the client was (issue 24: at -P 1 on 2 cores
# redis-benchmark is the bottleneck against both servers; its busy share
# near 1 shows it, and then the ratio of the throughputs is the ratio of
# the client's CPU per request).
#
#   scripts/bench-pair.sh                                    # redis vs this checkout's build
#   scripts/bench-pair.sh base:/tmp/a/vigil-server new:/tmp/b/vigil-server
#   scripts/bench-pair.sh spin:/tmp/v nospin:/tmp/v:VIGIL_SPIN_US=0
#
# Each argument is NAME:BIN[:VAR=VALUE[,VAR=VALUE...]]: a vigil-server
# binary and the environment it runs with. Without arguments: one variant,
# "vigil", built from the checkout (or VIGIL_SERVER_BIN).
#
# Environment:
#   ROUNDS       rounds (default 5); in a round every test runs against
#                every server back to back, the servers' order rotating
#   N            requests per run (default 50000: about a second, so a
#                round's runs see the same machine)
#   TESTS        redis-benchmark -t list (default set,get,lpush)
#   PIPE         -P (default 1)
#   CLIENTS      -c (default 50)
#   RANDOM_KEYS  -r (default 100000)
#   DATA         -d, the value size in bytes (default 3, redis-benchmark's)
#   FLUSH        1 (default): FLUSHALL before every run; 0: data grows
#                from run to run, as in scripts/bench-tail.sh
#   PORT_BASE    take the servers' ports from PORT_BASE up
#
# The client's CPU is perf stat's task-clock of redis-benchmark (left out
# without perf); the server's is /proc/PID/stat's utime+stime, in ticks of
# 10 ms (about 1% of a 50 k-request run). Per test and server it prints the
# medians over the rounds, then per vigil variant the median of the rounds'
# paired ratios to redis-server and the worst round: rps (worst: lowest),
# p99 and max (worst: highest). "cli busy" is rps x the client's CPU per
# request.
set -euo pipefail

ROUNDS="${ROUNDS:-5}"
N="${N:-50000}"
TESTS="${TESTS:-set,get,lpush}"
PIPE="${PIPE:-1}"
CLIENTS="${CLIENTS:-50}"
RANDOM_KEYS="${RANDOM_KEYS:-100000}"
DATA="${DATA:-3}"
FLUSH="${FLUSH:-1}"

prog=bench-pair.sh
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_tools
setup_work

names=(redis)
start redis "$REDIS_SERVER_BIN"
pid_redis="${pids[-1]}"
specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then
  vigil_binary
  specs=("vigil:$vigil")
fi
for spec in "${specs[@]}"; do
  IFS=: read -r name bin envs <<<"$spec"
  [[ "$name" =~ ^[A-Za-z0-9_]+$ ]] || die "variant name $name: letters, digits and _ only"
  [ -x "$bin" ] || die "$bin is not executable"
  # A wrapper that execs the server: the pid start records is the server's.
  {
    echo '#!/bin/sh'
    printf 'exec env'
    IFS=, read -r -a vars <<<"${envs:-}"
    for v in "${vars[@]}"; do printf ' %q' "$v"; done
    printf ' %q "$@"\n' "$bin"
  } >"$work/$name.sh"
  chmod +x "$work/$name.sh"
  start "$name" "$work/$name.sh"
  printf -v "pid_$name" '%s' "${pids[-1]}"
  names+=("$name")
done
echo "host: $(nproc) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
perf_ok=0
if command -v perf >/dev/null 2>&1 && perf stat -x, -e task-clock -o /dev/null true 2>/dev/null; then perf_ok=1; fi

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz="$(getconf CLK_TCK)"

# run NAME TEST ROUND: one redis-benchmark run; appends "test name round rps
# p50 p99 max cli_us srv_us" to $work/results (the CSV's last line: the
# LRANGE tests print their LPUSH fill first).
run() {
  local name="$1" test="$2" round="$3" port pid t0 t1 cli=0
  port="port_$name"
  pid="pid_$name"
  if [ "$FLUSH" = 1 ]; then redis-cli -p "${!port}" FLUSHALL >/dev/null; fi
  t0="$(ticks "${!pid}")"
  if [ "$perf_ok" = 1 ]; then
    perf stat -x, -e task-clock -o "$work/cli" redis-benchmark -p "${!port}" -c "$CLIENTS" -P "$PIPE" -n "$N" \
      -r "$RANDOM_KEYS" -d "$DATA" -t "$test" --csv >"$work/bench" 2>&1
    cli="$(awk -F, -v n="$N" '/task-clock/ { printf "%.3f", $1 * 1000 / n }' "$work/cli")"
  else
    redis-benchmark -p "${!port}" -c "$CLIENTS" -P "$PIPE" -n "$N" -r "$RANDOM_KEYS" -d "$DATA" -t "$test" --csv >"$work/bench" 2>&1
  fi
  t1="$(ticks "${!pid}")"
  awk -F, -v t="$test" -v s="$name" -v r="$round" -v cli="$cli" -v srv="$(( (t1 - t0) * 1000000 / hz ))" -v n="$N" '
    NR >= 2 && /^"/ { gsub(/"/, ""); line = t " " s " " r " " $2 " " $5 " " $7 " " $8 " " cli " " srv / n; ok = 1 }
    END { if (!ok) { print "no result for " t " on " s > "/dev/stderr"; exit 1 }; print line }' "$work/bench" >>"$work/results"
}

IFS=, read -r -a tests <<<"$TESTS"
ns=${#names[@]}
for round in $(seq 1 "$ROUNDS"); do
  for test in "${tests[@]}"; do
    for j in $(seq 0 $((ns - 1))); do
      run "${names[$(( (j + round) % ns ))]}" "$test" "$round"
    done
  done
  echo "round $round done" >&2
done

echo
echo "redis-benchmark -c $CLIENTS -P $PIPE -n $N -r $RANDOM_KEYS -d $DATA, $ROUNDS rounds, FLUSH=$FLUSH (medians of the rounds; ratios: median of the rounds' pairs with redis (worst))"
awk -v names="${names[*]}" '
  function med(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { v[$1, $2, $3, "rps"] = $4; v[$1, $2, $3, "p50"] = $5; v[$1, $2, $3, "p99"] = $6; v[$1, $2, $3, "max"] = $7
    v[$1, $2, $3, "cli"] = $8; v[$1, $2, $3, "srv"] = $9; v[$1, $2, $3, "busy"] = $4 * $8 / 1e6
    if (!($1 in seen)) { seen[$1] = 1; order[++nt] = $1 }
    if ($3 > rounds) rounds = $3 }
  END {
    ns = split(names, nm, " ")
    split("rps p50 p99 max cli srv busy", ks, " ")
    for (x = 1; x <= nt; x++) {
      t = order[x]
      printf "%s\n  %-10s %8s %6s %6s %6s %7s %7s %5s\n", t, "server", "rps", "p50", "p99", "max", "cli_us", "srv_us", "busy"
      for (i = 1; i <= ns; i++) {
        s = nm[i]; line = sprintf("  %-10s", s)
        for (k = 1; k <= 7; k++) {
          n = 0; for (r = 1; r <= rounds; r++) if ((t, s, r, ks[k]) in v) a[++n] = v[t, s, r, ks[k]]
          m = med(a, n)
          line = line sprintf(k == 1 ? " %8.0f" : k <= 4 ? " %6.3f" : k <= 6 ? " %7.2f" : " %5.2f", m)
        }
        if (i > 1) {
          split("rps p99 max", rk, " ")
          for (k = 1; k <= 3; k++) {
            n = 0; w = ""
            for (r = 1; r <= rounds; r++) if ((t, s, r, rk[k]) in v && v[t, "redis", r, rk[k]] > 0) {
              q = v[t, s, r, rk[k]] / v[t, "redis", r, rk[k]]; a[++n] = q
              if (w == "" || (k == 1 ? q < w : q > w)) w = q
            }
            line = line sprintf(" | %s %.2f (%.2f)", rk[k], med(a, n), w)
            if (k == 1) { lg[s] += log(med(a, n)); cnt[s]++ }
          }
        }
        print line
      }
    }
    for (i = 2; i <= ns; i++) printf "%s/redis throughput geomean: %.3f\n", nm[i], exp(lg[nm[i]] / cnt[nm[i]])
  }' "$work/results"
