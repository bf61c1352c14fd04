#!/usr/bin/env bash
# RSS after a `redis-cli --pipe` load (docs/benchmarks.md, "Memory after a
# --pipe load"): starts BINARY (vigil-server or redis-server) on a free port
# with --save '' --appendonly no, pipes N single-element commands of DATASET
# into it, waits SETTLE seconds and prints VmRSS and the load time.
#
#   scripts/rss-after-pipe.sh BINARY strings|hash|zset [N] [SETTLE]
#
# strings: SET key:i value:i; hash: HSET bighash field-i value-i; zset: ZADD
# bigzset <i*7919 mod 1000003> member-i. Run it for both servers in turn, on
# an otherwise idle machine.
set -euo pipefail
bin=$1 ds=$2 n=${3:-1000000} settle=${4:-10}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT
awk -v n="$n" -v ds="$ds" 'function cmd(a, b, c, d) {
	printf "*4\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(a), a, length(b), b, length(c), c, length(d), d
}
BEGIN {
	for (i = 0; i < n; i++) {
		if (ds == "strings") printf "*3\r\n$3\r\nSET\r\n$%d\r\nkey:%d\r\n$%d\r\nvalue:%d\r\n", length("key:" i), i, length("value:" i), i
		else if (ds == "hash") cmd("HSET", "bighash", "field-" i, "value-" i)
		else if (ds == "zset") cmd("ZADD", "bigzset", (i * 7919) % 1000003, "member-" i)
		else { print "unknown dataset " ds > "/dev/stderr"; exit 1 }
	}
}' > "$work/load.resp"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" --port "$port" --save '' --appendonly no --dir "$work" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
start=$(date +%s.%N)
redis-cli -p "$port" --pipe < "$work/load.resp" >/dev/null
end=$(date +%s.%N)
sleep "$settle"
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
printf '%s %s n=%d rss=%.1fMB load=%.2fs\n' "$(basename "$bin")" "$ds" "$n" "$(echo "$rss/1024" | bc -l)" "$(echo "$end - $start" | bc -l)"
