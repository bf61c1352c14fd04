#!/usr/bin/env bash
# GEOSEARCH / GEORADIUS rates against redis-server (docs/benchmarks.md,
# "Geo searches"): loads the same 200 k points (GEOADD pts, longitudes 13..14,
# latitudes 52..53, awk's srand(1)) into redis-server on PORT and VIGIL on
# PORT+1 through `redis-cli --pipe`, then runs redis-benchmark -c 4 on each:
# BYRADIUS 2 km ASC (283 results), BYRADIUS 20 km COUNT 10 (33543 in the
# circle) and GEORADIUS 2 km ASC. Run it under the CPU lock.
#
#   scripts/bench-geo.sh VIGIL-SERVER-BINARY [PORT]
set -euo pipefail
VIGIL=$1
PORT=${2:-23001}
D=$(mktemp -d)
trap 'redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true; kill "$VP" 2>/dev/null || true; rm -rf "$D"' EXIT
awk 'BEGIN{srand(1); for(i=0;i<200000;i++){printf "GEOADD pts %.6f %.6f m%d\n", 13+rand(), 52+rand(), i}}' > "$D/load.txt"
redis-server --port "$PORT" --save '' --appendonly no --daemonize yes --dir "$D" --logfile "$D/redis.log"
"$VIGIL" --port $((PORT + 1)) --save '' --appendonly no --dir "$D" > "$D/vigil.log" 2>&1 &
VP=$!
for p in "$PORT" $((PORT + 1)); do
	for _ in $(seq 100); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
	redis-cli -p "$p" --pipe < "$D/load.txt" | tail -1
done
for p in "$PORT" $((PORT + 1)); do
	echo "port $p"
	redis-benchmark -p "$p" -n 3000 -c 4 -q GEOSEARCH pts FROMLONLAT 13.5 52.5 BYRADIUS 2 km ASC | tr '\r' '\n' | tail -1
	redis-benchmark -p "$p" -n 40 -c 4 -q GEOSEARCH pts FROMLONLAT 13.5 52.5 BYRADIUS 20 km COUNT 10 | tr '\r' '\n' | tail -1
	redis-benchmark -p "$p" -n 3000 -c 4 -q GEORADIUS pts 13.5 52.5 2 km ASC | tr '\r' '\n' | tail -1
done
