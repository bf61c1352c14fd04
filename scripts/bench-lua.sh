#!/usr/bin/env bash
# bench-lua.sh: the Lua scripts users write (server/lua/bench_test.go's
# benchScripts: an empty for, x=x+i, table fill and sum, string building,
# a redis.call loop, cjson.encode+decode, pairs+ipairs) and scripts reading
# collections of 1000 elements or calling the string and table libraries
# (hgetall, lrange, smembers, zrange, strops, gmatch, tblops), each one
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
  [rcall]=300000 [cjson]=20000 [pairs]=20000
  [hgetall]=2000 [lrange]=2000 [smembers]=2000 [zrange]=2000 [strops]=100000 [gmatch]=20000 [tblops]=20000)

# More scripts, which read collections of 1000 elements through redis.call
# or call the string and table libraries (each makes and drops its keys).
more() {
  local fill="for i=1,1000 do redis.call('HSET','bl:h','f'..i,i) redis.call('RPUSH','bl:l',i) redis.call('SADD','bl:s','m'..i) redis.call('ZADD','bl:z',i,'m'..i) end"
  local drop="redis.call('DEL','bl:h','bl:l','bl:s','bl:z')"
  cat <<EOF
hgetall|local n=tonumber(ARGV[1]) $fill local s=0 for j=1,n do local r=redis.call('HGETALL','bl:h') local t={} for i=1,#r,2 do t[r[i]]=r[i+1] end s=s+#r end $drop return s
lrange|local n=tonumber(ARGV[1]) $fill local s=0 for j=1,n do local r=redis.call('LRANGE','bl:l',0,-1) for i=1,#r do s=s+tonumber(r[i]) end end $drop return s
smembers|local n=tonumber(ARGV[1]) $fill local s=0 for j=1,n do local r=redis.call('SMEMBERS','bl:s') s=s+#r end $drop return s
zrange|local n=tonumber(ARGV[1]) $fill local s=0 for j=1,n do local r=redis.call('ZRANGE','bl:z',0,-1,'WITHSCORES') s=s+#r end $drop return s
strops|local n=tonumber(ARGV[1]) local s=0 local str=string.rep('abc,def;',50) for j=1,n do local a=string.sub(str,3,40) local b=string.find(str,'def',10,true) local c=string.gsub(str,',',';') local d=string.upper(a) s=s+#a+b+#c+#d end return s
gmatch|local n=tonumber(ARGV[1]) local s=0 local str=string.rep('key:123 ',40) for j=1,n do for w in string.gmatch(str,'%d+') do s=s+tonumber(w) end end return s
tblops|local n=tonumber(ARGV[1]) local s=0 for j=1,n do local t={} for i=1,50 do table.insert(t,i) end table.sort(t,function(a,b) return a>b end) while #t>0 do s=s+table.remove(t) end end return s
EOF
}

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
done < <(sed -n 's/^\t{"\([a-z]*\)", "\(.*\)"},$/\1|\2/p' "$root/server/lua/bench_test.go"; more)
exit $status
