#!/usr/bin/env bash
# build-fifo-netpoll.sh: an EXPERIMENTAL vigil-server build whose Go runtime
# runs the goroutines that one network poll made ready in the order their
# sockets became ready (issue 24, -P 1 tail latency).
#
#   scripts/build-fifo-netpoll.sh OUT     # builds ./cmd/vigil-server to OUT
#
# Why: runtime.netpoll (src/runtime/netpoll_epoll.go) walks epoll_wait's
# events in the kernel's order, oldest readiness first, but collects the
# woken goroutines with gList.push (netpollready), so the list it returns
# is newest first; findRunnable runs its head and queues the rest head to
# tail. With GOMAXPROCS=1 and many connections, every poll's batch is
# served newest first: the request that arrived first waits for all the
# others of its batch, where redis-server serves epoll's order. The mean
# latency is unchanged (Little's law), its spread is not. Measured with
# scripts/bench-pair.sh (redis-benchmark -c 50 -P 1, GET/SET/LPUSH/ZADD,
# 4 runs, 24 rounds, 2026-11-30), this build against the same commit's
# stock build, side by side with redis-server: p99 vigil/redis, geomean of
# the 15 test medians, 0.98 against 1.14 (lower in all 15); throughput
# geomean 1.01 against 0.99. At -P 16 it may cost throughput (newest
# first reads the socket whose data is warmest): geomean vigil/redis 1.05
# and 1.06 against 1.14 and 1.10 in two runs (4 and 6 rounds), p99 mixed.
#
# How: the same source file with its result reversed, given to go build
# as an -overlay (no toolchain is changed). The script checks that the
# file has the one line it edits; with another Go release whose netpoll
# differs it stops rather than build something else. Only for Linux
# (epoll). Not the default build: whether to ship a runtime change, and
# how, is open.
set -euo pipefail
out="${1:?usage: $0 OUT}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$(go env GOROOT)/src/runtime/netpoll_epoll.go"
work="$(mktemp -d "${TMPDIR:-/tmp}/vigil-fifo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
anchor=$'\treturn toRun, delta'
[ "$(grep -cxF "$anchor" "$src")" = 1 ] || {
  echo "build-fifo-netpoll.sh: $src does not end netpoll with '$anchor' once: another Go release, not patched" >&2
  exit 1
}
awk -v anchor="$anchor" '
  $0 == anchor {
    print "\t// vigil (scripts/build-fifo-netpoll.sh): readiness order, oldest first."
    print "\tvar fifo gList"
    print "\tfor !toRun.empty() {"
    print "\t\tfifo.push(toRun.pop())"
    print "\t}"
    print "\treturn fifo, delta"
    next
  }
  { print }' "$src" >"$work/netpoll_epoll.go"
printf '{"Replace":{"%s":"%s"}}\n' "$src" "$work/netpoll_epoll.go" >"$work/overlay.json"
(cd "$root" && go build -overlay "$work/overlay.json" -o "$out" ./cmd/vigil-server)
echo "built $out with the FIFO netpoll overlay ($(go version | cut -d' ' -f3))" >&2
