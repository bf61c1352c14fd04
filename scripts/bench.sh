#!/usr/bin/env bash
# bench.sh: redis-benchmark against vigil-server and Debian's redis-server in
# the same run, on the same machine, with the same flags.
#
#   scripts/bench.sh                      # defaults below
#   N1=50000 N16=100000 scripts/bench.sh  # fewer requests
#   ROUNDS=3 scripts/bench.sh             # median of 3 rounds
#   KEYSPACE=0 scripts/bench.sh           # only the fixed-key table
#
# Environment:
#   N1       requests per test at -P 1   (default 100000)
#   N16      requests per test at -P 16  (default 200000)
#   CLIENTS  parallel connections, -c    (default 50)
#   TESTS    redis-benchmark -t list     (default set,get,incr,mset,lpush,
#            lpop,rpop,sadd,spop,hset,zadd,lrange_100,lrange_600)
#   EVALSHA  1 (default) also runs EVALSHA of a one-key INCR script, loaded
#            on both servers with SCRIPT LOAD; 0 leaves it out
#   KEYSPACE redis-benchmark -r: random keys and members out of this many
#            (default 100000), so values grow as users' do: SET/GET/INCR/
#            MSET on 100 k keys, SADD/SPOP on a set, HSET on a hash and
#            ZADD (random scores) on a sorted set of up to 100 k members.
#            This is the main table; then the same tests run without -r
#            (every write on one key with one member, as redis-benchmark
#            does by default) as a second table. KEYSPACE=0: only that one.
#            redis-benchmark's list tests (LPUSH, LPOP, RPOP, LRANGE) use
#            one list and one value with or without -r.
#   FIXED    1 (default) also runs the fixed-key table; 0 leaves it out
#   ROUNDS   rounds per pipeline depth (default 1). Within a round each
#            test runs against both servers back to back (one
#            redis-benchmark run per test and server), the order of the
#            two alternating from test to test, so each pair is measured
#            within seconds on the same machine; the ratio reported is the
#            median over the rounds of each round's pair vigil/redis
#   VIGIL_SERVER_BIN  use this vigil-server binary instead of building one
#   GOMAXPROCS        passed on to vigil-server (its default: io-threads, 1)
#   VIGIL_CPUPROFILE  vigil-server writes a Go CPU profile there until it
#                     stops (go tool pprof BINARY FILE)
#   REDIS_SERVER_BIN  the reference server (default: redis-server on PATH)
#   PORT_BASE  take the servers' ports from PORT_BASE up (the first free
#              ones) instead of random free ports in 20000-31999
#
# For each pipeline depth P it prints, per test, the median requests per
# second of redis-server and vigil-server, the median of the rounds' paired
# ratios vigil/redis and each round's ratio, then the geometric mean of the
# tests' ratios and the lowest one. Both servers run with --save '' --appendonly
# no on free loopback ports and are stopped on exit.
set -euo pipefail

N1="${N1:-100000}"
N16="${N16:-200000}"
CLIENTS="${CLIENTS:-50}"
TESTS="${TESTS:-set,get,incr,mset,lpush,lpop,rpop,sadd,spop,hset,zadd,lrange_100,lrange_600}"
EVALSHA="${EVALSHA:-1}"
# The EVALSHA test's script: one key, one write, like the lock and counter
# scripts applications run.
evalsha_script="return redis.call('incr', KEYS[1])"
ROUNDS="${ROUNDS:-1}"
KEYSPACE="${KEYSPACE:-100000}"
FIXED="${FIXED:-1}"
[[ "$KEYSPACE" =~ ^[0-9]+$ ]] || { echo "bench.sh: KEYSPACE must be a number" >&2; exit 1; }

prog=bench.sh
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_tools
setup_work
vigil_binary

start redis "$REDIS_SERVER_BIN"
start vigil "$vigil"
echo "redis-server: $("$REDIS_SERVER_BIN" --version)" >&2
echo "vigil-server: $("$vigil" --version | tr '\n' ' ')" >&2
echo "host: $(nproc) CPUs, $(uname -sr)" >&2
# vigil-server runs with GOMAXPROCS = io-threads (default 1) unless
# GOMAXPROCS is set in the environment, which it inherits from here.
echo "GOMAXPROCS: ${GOMAXPROCS:-unset (vigil-server: io-threads, default 1)}" >&2

# bench NAME P N ROUND TEST R: one redis-benchmark run of one test (a -t
# test, or evalsha), with -r R unless R is 0; appends
# "table<TAB>test<TAB>name<TAB>rps<TAB>round" lines to $work/results, where
# table is "-P P" and the key mode. Test names are redis-benchmark's without the
# " (first N elements)" suffix; the LPUSH that fills the list for LRANGE is
# left out.
bench() {
  local name="$1" p="$2" n="$3" round="$4" test="$5" r="$6" var="port_$1" out sha count table
  local rflag=()
  if [ "$r" != 0 ]; then rflag=(-r "$r"); table="-P $p, -r $r"; else table="-P $p, fixed keys"; fi
  out="$work/$name.P$p.R$r.r$round.$test.csv"
  if [ "$test" != evalsha ]; then
    redis-benchmark -p "${!var}" -q -c "$CLIENTS" -n "$n" -t "$test" -P "$p" "${rflag[@]}" --csv >"$out" 2>"$work/bench.err" ||
      { cat "$work/bench.err" >&2; die "redis-benchmark -t $test against $name failed"; }
  else
    # SCRIPT LOAD returns the same sha1 on both servers; FLUSHALL keeps
    # the script cache, loading again is harmless.
    sha="$(redis-cli -p "${!var}" SCRIPT LOAD "$evalsha_script")"
    [[ "$sha" =~ ^[0-9a-f]{40}$ ]] || die "SCRIPT LOAD on $name answered: $sha"
    redis-cli -p "${!var}" DEL evalsha:counter >/dev/null
    redis-benchmark -p "${!var}" -q -c "$CLIENTS" -n "$n" -P "$p" --csv \
      EVALSHA "$sha" 1 evalsha:counter >"$out.evalsha" 2>"$work/bench.err" ||
      { cat "$work/bench.err" >&2; die "redis-benchmark EVALSHA against $name failed"; }
    # The script ran: every call incremented the counter (error replies
    # would not have).
    count="$(redis-cli -p "${!var}" GET evalsha:counter)"
    [[ "$count" =~ ^[0-9]+$ ]] && [ "$count" -ge "$n" ] ||
      die "EVALSHA on $name: evalsha:counter is '$count' after $n calls"
    # The custom command's name is the whole command line.
    sed -E '2,$s/^"EVALSHA [^"]*"/"EVALSHA"/' "$out.evalsha" >"$out"
  fi
  # "test","rps",... ; skip the header lines.
  awk -F'","' -v p="$table" -v name="$name" -v round="$round" '$1 != "\"test" {
    gsub(/^"/, "", $1)
    if ($1 ~ /needed to benchmark/) next
    sub(/ \(.*\)$/, "", $1)
    print p "\t" $1 "\t" name "\t" $2 "\t" round
  }' "$out" >>"$work/results"
}

# The tests, one redis-benchmark run each, in redis-benchmark's own order
# (so each server's keyspace goes through the same states as in one -t run:
# LPOP and RPOP pop what LPUSH pushed, SPOP what SADD added).
tests=()
if [ -n "$TESTS" ]; then IFS=, read -r -a tests <<<"$TESTS"; fi
[ "$EVALSHA" = 1 ] && tests+=(evalsha)
[ "${#tests[@]}" -gt 0 ] || die "no tests: TESTS is empty and EVALSHA=0"

: >"$work/results"
# The key modes, one table each: -r KEYSPACE first, then fixed keys.
modes=()
[ "$KEYSPACE" != 0 ] && modes+=("$KEYSPACE")
{ [ "$FIXED" = 1 ] || [ "$KEYSPACE" = 0 ]; } && modes+=(0)
run=0
for r in "${modes[@]}"; do
for p in 1 16; do
  if [ "$p" = 1 ]; then n="$N1"; else n="$N16"; fi
  for round in $(seq 1 "$ROUNDS"); do
    echo "  P=$p -r $r round $round (-n $n)" >&2
    for name in redis vigil; do
      var="port_$name"
      redis-cli -p "${!var}" FLUSHALL >/dev/null
    done
    # Each test runs against both servers back to back, so the pair sees
    # the same machine (the noise on a shared 2-core host drifts over
    # tens of seconds); which server goes first alternates every test.
    for test in "${tests[@]}"; do
      if [ $((run % 2)) = 0 ]; then order="redis vigil"; else order="vigil redis"; fi
      run=$((run + 1))
      for name in $order; do
        bench "$name" "$p" "$n" "$round" "$test" "$r"
      done
    done
  done
done
done

echo
evalsha_note=""
[ "$EVALSHA" = 1 ] && evalsha_note=" and EVALSHA <sha> 1 evalsha:counter (script: $evalsha_script)"
echo "redis-benchmark -q -c $CLIENTS -t $TESTS$evalsha_note --csv, -n $N1 at -P 1 and $N16 at -P 16, median of $ROUNDS round(s); key modes (-r, 0 = fixed keys): ${modes[*]}"
# Per (P, test): each server's median rate and the median of the rounds'
# paired ratios (vigil/redis of the same round, measured back to back),
# then the table with the geometric mean of those ratios and the lowest.
awk -F'\t' '
  function median(arr, n,    i, j, t) {
    for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
    return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
  }
  {
    if (!($1 in seenp)) { seenp[$1] = 1; ps[++np] = $1 }
    t = $1 SUBSEP $2
    if (!(t in seent)) { seent[t] = 1; tests[$1, ++nt[$1]] = $2 }
    rps[$1, $2, $3, $5] = $4
    if (!(($1, $2, $5) in seenr)) { seenr[$1, $2, $5] = 1; rounds[$1, $2, ++nr[$1, $2]] = $5 }
  }
  END {
    for (i = 1; i <= np; i++) {
      p = ps[i]
      printf "\n%s\n", p
      printf "%-16s %14s %14s %12s %12s\n", "test", "redis rps", "vigil rps", "vigil/redis", "per round"
      sum = 0; k = 0; low = 0; lowt = ""
      for (j = 1; j <= nt[p]; j++) {
        t = tests[p, j]; nrr = 0; nv = 0; nq = 0; list = ""
        delete rr; delete vv; delete qq
        for (q = 1; q <= nr[p, t]; q++) {
          r = rounds[p, t, q]
          a = rps[p, t, "redis", r]; b = rps[p, t, "vigil", r]
          if (a > 0) rr[++nrr] = a
          if (b > 0) vv[++nv] = b
          if (a > 0 && b > 0) { qq[++nq] = b / a; list = list (list == "" ? "" : " ") sprintf("%.2f", b / a) }
        }
        mr = nrr ? median(rr, nrr) : 0; mv = nv ? median(vv, nv) : 0
        if (nq > 0) {
          ratio = median(qq, nq); sum += log(ratio); k++; rs = sprintf("%.2f", ratio)
          if (lowt == "" || ratio < low) { low = ratio; lowt = t }
        } else { rs = "n/a" }
        printf "%-16s %14.0f %14.0f %12s   %s\n", t, mr, mv, rs, list
      }
      if (k > 0) {
        printf "%-16s %14s %14s %12.2f\n", "geomean", "", "", exp(sum / k)
        printf "%-16s %14s %14s %12.2f   (%s)\n", "lowest", "", "", low, lowt
      }
    }
  }
' "$work/results"
