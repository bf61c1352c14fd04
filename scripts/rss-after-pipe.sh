#!/usr/bin/env bash
# RSS after a `redis-cli --pipe` load (docs/benchmarks.md, "Memory after a
# --pipe load"): starts BINARY (vigil-server or redis-server) on a free port
# with --save '' --appendonly no, pipes N single-element commands of DATASET
# into it, waits SETTLE seconds and prints VmRSS, its anonymous part
# (RssAnon: without the binary's file pages) and the load time.
#
#   scripts/rss-after-pipe.sh BINARY DATASET [N] [SETTLE]
#
# One big value of N elements:
#   strings  SET key:i value:i (N keys)
#   list     RPUSH biglist element-i
#   hash     HSET bighash field-i value-i
#   set      SADD bigset member-i
#   zset     ZADD bigzset <i*7919 mod 1000003> member-i
# Many small values, N elements in all, SMALL (default 5) per key, key by key
# (keys k = i / SMALL, element j = i mod SMALL):
#   small-list    RPUSH list:k element-j
#   small-hash    HSET hash:k field-j value-i
#   small-set     SADD set:k member-j        (strings: a hashtable in Redis 7.0)
#   small-intset  SADD iset:k i              (integers: an intset in Redis)
#   small-zset    ZADD zset:k i member-j
# And strings-ttl: SET key:i value:i EX 100000 (N keys, each with a TTL).
#
# SERVER_ARGS adds directives to both servers' command lines, for example
# SERVER_ARGS="--list-compress-depth 1".
#
# Run it for both servers in turn, on an otherwise idle machine.
set -euo pipefail
pid= bin=$1 ds=$2 n=${3:-1000000} settle=${4:-10} small=${SMALL:-5}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT
awk -v n="$n" -v ds="$ds" -v small="$small" 'function cmd(a, b, c, d) {
	printf "*4\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(a), a, length(b), b, length(c), c, length(d), d
}
function cmd3(a, b, c) {
	printf "*3\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(a), a, length(b), b, length(c), c
}
BEGIN {
	for (i = 0; i < n; i++) {
		k = int(i / small); j = i % small
		if (ds == "strings") cmd3("SET", "key:" i, "value:" i)
		else if (ds == "strings-ttl") printf "*5\r\n$3\r\nSET\r\n$%d\r\nkey:%d\r\n$%d\r\nvalue:%d\r\n$2\r\nEX\r\n$6\r\n100000\r\n", length("key:" i), i, length("value:" i), i
		else if (ds == "list") cmd3("RPUSH", "biglist", "element-" i)
		else if (ds == "hash") cmd("HSET", "bighash", "field-" i, "value-" i)
		else if (ds == "set") cmd3("SADD", "bigset", "member-" i)
		else if (ds == "zset") cmd("ZADD", "bigzset", (i * 7919) % 1000003, "member-" i)
		else if (ds == "small-list") cmd3("RPUSH", "list:" k, "element-" j)
		else if (ds == "small-hash") cmd("HSET", "hash:" k, "field-" j, "value-" i)
		else if (ds == "small-set") cmd3("SADD", "set:" k, "member-" j)
		else if (ds == "small-intset") cmd3("SADD", "iset:" k, i)
		else if (ds == "small-zset") cmd("ZADD", "zset:" k, i, "member-" j)
		else { print "unknown dataset " ds > "/dev/stderr"; exit 1 }
	}
}' > "$work/load.resp"
port=${PORT:-}; [ -n "$port" ] || port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# shellcheck disable=SC2086 # SERVER_ARGS is split into directives on purpose
"$bin" --port "$port" --save '' --appendonly no --dir "$work" ${SERVER_ARGS:-} >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
start=$(date +%s.%N)
redis-cli -p "$port" --pipe < "$work/load.resp" >/dev/null
end=$(date +%s.%N)
sleep "$settle"
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
anon=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status")
keys=$(redis-cli -p "$port" dbsize)
# INFO_OUT=FILE keeps the server's INFO memory (allocator_* fields) at that point.
[ -z "${INFO_OUT:-}" ] || redis-cli -p "$port" info memory > "$INFO_OUT"
printf '%s %s n=%d keys=%d rss=%.1fMB anon=%.1fMB load=%.2fs\n' "$(basename "$bin")" "$ds" "$n" "$keys" "$(echo "$rss/1024" | bc -l)" "$(echo "$anon/1024" | bc -l)" "$(echo "$end - $start" | bc -l)"
