#!/usr/bin/env bash
# bench-tls.sh: redis-benchmark --tls against redis-server and vigil-server
# started side by side with the same certificates (a CA and a server pair
# made with openssl in the work directory; tls-auth-clients no), SET and
# GET at -P 1 and -P 16, -c 50, -r 100000, the order alternating each
# round. Prints each test's median requests per second and vigil/redis
# (above 1: Vigil is faster), with the rounds' ratios.
#
# Environment: ROUNDS (default 3), N (requests per run, default 200000),
# VIGIL_SERVER_BIN (default: a build of this checkout), REDIS_SERVER_BIN,
# PORT_BASE.
set -euo pipefail
prog=bench-tls
. "$(dirname "$0")/lib.sh"

ROUNDS="${ROUNDS:-3}"
N="${N:-200000}"
need openssl
need_tools
setup_work
vigil_binary

tls="$work/tls"
mkdir -p "$tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=bench CA" \
  -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
  -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
  -out "$tls/server.crt" 2>/dev/null

declare -A tport
for name in redis vigil; do
  bin="$REDIS_SERVER_BIN"
  [ "$name" = vigil ] && bin="$vigil"
  tport[$name]="$(free_port)"
  start "$name" "$bin" --tls-port "${tport[$name]}" --tls-cert-file "$tls/server.crt" \
    --tls-key-file "$tls/server.key" --tls-ca-cert-file "$tls/ca.crt" --tls-auth-clients no
done

declare -A rps
tests=("set 1" "get 1" "set 16" "get 16")
for round in $(seq 1 "$ROUNDS"); do
  order=(redis vigil)
  [ $((round % 2)) = 0 ] && order=(vigil redis)
  for t in "${tests[@]}"; do
    read -r cmd pipe <<<"$t"
    for name in "${order[@]}"; do
      r=$(redis-benchmark -p "${tport[$name]}" --tls --cacert "$tls/ca.crt" -t "$cmd" -P "$pipe" -c 50 \
        -r 100000 -n "$N" -q 2>/dev/null | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
      rps["$cmd $pipe $name"]+="$r "
    done
  done
  echo "round $round done" >&2
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-12s %12s %12s %8s  %s\n' test redis vigil ratio rounds
for t in "${tests[@]}"; do
  read -r cmd pipe <<<"$t"
  r=$(echo "${rps["$cmd $pipe redis"]}" | median)
  v=$(echo "${rps["$cmd $pipe vigil"]}" | median)
  rounds=$(paste -d' ' <(echo "${rps["$cmd $pipe redis"]}" | tr ' ' '\n' | grep -v '^$') \
    <(echo "${rps["$cmd $pipe vigil"]}" | tr ' ' '\n' | grep -v '^$') | awk '{printf "%.2f ", $2/$1}')
  printf '%-12s %12s %12s %8s  %s\n' "$cmd -P $pipe" "$r" "$v" "$(awk -v v="$v" -v r="$r" 'BEGIN {printf "%.2f", v / r}')" "$rounds"
done
