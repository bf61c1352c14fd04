#!/usr/bin/env bash
# bench-lua.sh: the Lua scripts users write (server/lua/bench_test.go's
# benchScripts: an empty for, x=x+i, table fill and sum, string building,
# a redis.call loop, cjson.encode+decode, pairs+ipairs), each one
# `EVAL body 0 N` timed by its redis-cli round trip on redis-server and on
# vigil-server started side by side, the order alternating each round.
# Prints each script's median times and vigil/redis ratio (below 1: Vigil
# is faster), the rounds' ratios, and fails if the two servers' replies
# differ.
#
# Environment: ROUNDS (default 3), SCRIPTS (comma-separated names, default
# all), SCALE (multiplies every N, default 1), VIGIL_SERVER_BIN (default: a
# build of this checkout), REDIS_SERVER_BIN, PORT_BASE.
set -euo pipefail
prog=bench-lua
. "$(dirname "$0")/lib.sh"

ROUNDS="${ROUNDS:-3}"
SCRIPTS="${SCRIPTS:-}"
SCALE="${SCALE:-1}"
root="$(cd "$(dirname "$0")/.." && pwd)"

need_tools
setup_work
vigil_binary
start redis "$REDIS_SERVER_BIN"
start vigil "$vigil"

# N per script: a run of about a second on redis-server (AMD EPYC VM).
declare -A N=([emptyfor]=300000000 [arith]=200000000 [table]=3000000 [string]=500000
  [rcall]=300000 [cjson]=20000 [pairs]=20000)

# run PORT BODY N: prints the reply's checksum and the seconds it took.
run() {
  local t0 t1 sum
  t0=$(date +%s%N)
  sum=$(redis-cli -p "$1" EVAL "$2" 0 "$3" | md5sum | cut -c1-12)
  t1=$(date +%s%N)
  echo "$sum $(( (t1 - t0) / 1000 ))"
}

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m/1e6}'; }

printf '%-9s %9s %9s %7s  %s\n' script redis_s vigil_s ratio "rounds (vigil/redis)"
status=0
while IFS='|' read -r name body; do
  if [ -n "$SCRIPTS" ] && [[ ",$SCRIPTS," != *",$name,"* ]]; then continue; fi
  n=$(awk -v n="${N[$name]}" -v s="$SCALE" 'BEGIN {printf "%d", n*s}')
  : >"$work/r.$name"; : >"$work/v.$name"; rounds=""
  for r in $(seq 1 "$ROUNDS"); do
    if (( r % 2 )); then order="redis vigil"; else order="vigil redis"; fi
    for who in $order; do
      port_var="port_$who"
      read -r sum us < <(run "${!port_var}" "$body" "$n")
      echo "$us" >>"$work/${who:0:1}.$name"
      printf -v "sum_$who" '%s' "$sum"
      printf -v "us_$who" '%s' "$us"
    done
    if [ "$sum_redis" != "$sum_vigil" ]; then
      echo "$name: the replies differ (round $r)" >&2
      status=1
    fi
    rounds+=" $(awk -v v="$us_vigil" -v r="$us_redis" 'BEGIN {printf "%.2f", v/r}')"
  done
  mr=$(median <"$work/r.$name"); mv=$(median <"$work/v.$name")
  printf '%-9s %9s %9s %7s %s\n' "$name" "$mr" "$mv" "$(awk -v v="$mv" -v r="$mr" 'BEGIN {printf "%.2f", v/r}')" "$rounds"
done < <(sed -n 's/^\t{"\([a-z]*\)", "\(.*\)"},$/\1|\2/p' "$root/server/lua/bench_test.go")
exit $status
