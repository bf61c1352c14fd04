#!/usr/bin/env bash
# The proof of issue 23: the same seeded fault schedule run three times,
#
#   on     vigil-server + vigil-sentinel with sync-ack mode on
#          (min-replicas-ack 1, min-replicas-ack-timeout <ms>) and
#          --expect-no-loss: no acknowledged write may be lost;
#   off    vigil-server + vigil-sentinel, the mode off, each write followed
#          by WAIT <n> (what a careful Redis user does);
#   redis  Debian's redis-server + redis-sentinel (--against redis), WAIT <n>;
#
# each `vigil drill --fault <fault> --rounds <n> --seed <s> --net netns`,
# then a summary table: acknowledged writes lost of acknowledged,
# linearizability of the register history (porcupine), unavailability
# (seconds without a successful write), the old master's longest write
# window (partition-master, split) and how long each fault's rounds took.
#
# Usage: scripts/proof-run.sh [options] [-- drill args for the "on" run]
#   -r ROUNDS   faults per run (default 100)
#   -s SEED     schedule seed (default 1)
#   -f FAULT    fault kind or all (default all)
#   -o DIR      output directory (default proof-<UTC time>)
#   -w N        WAIT N after each write in the off and redis runs (default 1;
#               0: a SET's OK is the acknowledgement)
#   -t MS       min-replicas-ack-timeout of the on run (default 100: with
#               1000 the sentinels' hello PUBLISH, which the mode holds too,
#               delays their PINGs until the master looks down)
#   -a ARG      extra drill argument for every run (repeatable), e.g.
#               -a --clients -a 8
#   -O RUNS     the runs to make, comma-separated (default on,off,redis)
#   -S          summary only: make no run, print the table of the runs -O
#               names from the reports already under -o DIR (to join runs
#               made by concurrent invocations with distinct -a --base-port
#               and -a --sentinel-base-port into the same -o DIR)
# Arguments after -- go to the "on" run only, e.g. more server directives:
#   scripts/proof-run.sh -r 3 -f split -- --server-directive 'fence-after 2000'
#
# Needs root, iproute2 and nftables (--net netns), jq, Go (to build vigil
# unless VIGIL_BIN names a binary) and, for the redis run, Debian's
# redis-server and redis-sentinel (when only redis-server is installed, a
# redis-sentinel link to it is made in a temporary directory: Debian's
# redis-sentinel is that same binary). `just proof` runs it.
set -euo pipefail

rounds=100 seed=1 fault=all out="" wait_off=1 ack_timeout=100 runs="on,off,redis" summary_only=""
common=()
while getopts "r:s:f:o:w:t:a:O:Sh" opt; do
  case "$opt" in
    r) rounds=$OPTARG ;;
    s) seed=$OPTARG ;;
    f) fault=$OPTARG ;;
    o) out=$OPTARG ;;
    w) wait_off=$OPTARG ;;
    t) ack_timeout=$OPTARG ;;
    a) common+=("$OPTARG") ;;
    O) runs=$OPTARG ;;
    S) summary_only=1 ;;
    h) sed -n '2,41p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [-r rounds] [-s seed] [-f fault] [-o dir] [-w wait] [-t ms] [-a arg]... [-O runs] [-S] [-- on-run drill args]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ "${1:-}" = "--" ]; then shift; fi
on_extra=("$@")

cd "$(dirname "$0")/.."
command -v jq >/dev/null || { echo "proof-run: jq is missing (apt-get install -y jq)" >&2; exit 2; }
if [ -z "$summary_only" ] && [ "$(id -u)" != 0 ]; then echo "proof-run: --net netns needs root" >&2; exit 2; fi
[ -n "$out" ] || out="proof-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
out=$(cd "$out" && pwd)

vigil=${VIGIL_BIN:-}
if [ -z "$vigil" ] && [ -z "$summary_only" ]; then
  vigil="$out/bin/vigil"
  echo "building $vigil"
  go build -o "$vigil" ./cmd/vigil
fi

if [[ ",$runs," == *",redis,"* ]] && ! command -v redis-sentinel >/dev/null; then
  rs=$(command -v redis-server || true)
  if [ -z "$rs" ]; then
    echo "proof-run: the redis run needs Debian's redis-server and redis-sentinel (apt-get install -y redis-server redis-sentinel)" >&2
    exit 2
  fi
  shim=$(mktemp -d)
  trap 'rm -rf "$shim"' EXIT
  ln -s "$rs" "$shim/redis-sentinel"
  export PATH="$shim:$PATH"
  echo "note: redis-sentinel is not installed; using $rs as redis-sentinel (Debian's redis-sentinel is a link to the same binary)"
fi

# run NAME ARGS...: one drill, its report under $out/NAME; records the exit
# status and the wall time.
run() {
  local name=$1; shift
  local dir="$out/$name"
  rm -rf "$dir"; mkdir -p "$dir"
  local args=(drill --fault "$fault" --rounds "$rounds" --seed "$seed" --net netns --json
    --dir "$dir/data" --report "$dir" "${common[@]}" "$@")
  printf '%q ' "$vigil" "${args[@]}" >"$dir/command.txt"; echo >>"$dir/command.txt"
  echo "== $name: $(cat "$dir/command.txt")"
  local t0 rc=0
  t0=$(date +%s)
  "$vigil" "${args[@]}" >"$dir/report.txt" 2>"$dir/progress.jsonl" || rc=$?
  echo "$rc" >"$dir/exit-status"
  echo $(( $(date +%s) - t0 )) >"$dir/wall-seconds"
  if [ ! -s "$dir/report.json" ]; then
    echo "   $name: no report (exit status $rc); last lines of $dir/progress.jsonl:" >&2
    tail -n 5 "$dir/progress.jsonl" >&2
  else
    echo "   exit status $rc, $(cat "$dir/wall-seconds") s"
  fi
}

IFS=, read -r -a want <<<"$runs"
for r in "${want[@]}"; do
  [ -z "$summary_only" ] || break
  case "$r" in
    on) run on --expect-no-loss --server-directive "min-replicas-ack 1" \
          --server-directive "min-replicas-ack-timeout $ack_timeout" "${on_extra[@]}" ;;
    off) run off --wait "$wait_off" ;;
    redis) run redis --against redis --wait "$wait_off" ;;
    *) echo "proof-run: unknown run $r (want on, off, redis)" >&2; exit 2 ;;
  esac
done

# The summary, from each report.json.
summary="$out/summary.txt"
{
  echo "vigil drill --fault $fault --rounds $rounds --seed $seed --net netns ($(date -u +%FT%TZ))"
  echo
  printf '%-6s %-31s %-6s %-22s %-13s %-12s %-14s %s\n' run deployment exit "lost/acknowledged" linearizable "unavail (s)" "old-master win" "wall (s)"
  for r in "${want[@]}"; do
    f="$out/$r/report.json"
    if [ ! -s "$f" ]; then
      printf '%-6s %s\n' "$r" "no report (exit status $(cat "$out/$r/exit-status" 2>/dev/null || echo '?'))"
      continue
    fi
    jq -r --arg run "$r" --arg rc "$(cat "$out/$r/exit-status")" --arg wall "$(cat "$out/$r/wall-seconds")" '
      def ack: if .loss.wait > 0 then "\(.loss.lost_with_wait)/\(.loss.checked_with_wait) (WAIT \(.loss.wait))"
               else "\(.loss.lost | length)/\(.loss.checked) (SET OK)" end;
      def win: [.faults[] | select(.old_master_write_window_ns != null) | .old_master_write_window_ns] |
               if length == 0 then "-" else "max \((max / 1e9 * 1000 | round) / 1000)" end;
      [$run, "\(.deployment.server)+\(.deployment.sentinel)", $rc, ack, .linearizability.result,
       ((.unavailable_total_ns / 1e9 * 10 | round) / 10 | tostring), win, $wall] | @tsv' "$f" |
      awk -F'\t' '{printf "%-6s %-31s %-6s %-22s %-13s %-12s %-14s %s\n", $1, $2, $3, $4, $5, $6, $7, $8}'
  done
  echo
  echo "round durations per fault (before the fault + the fault until recovered), seconds:"
  printf '%-6s %-22s %7s %7s %7s %7s\n' run fault rounds mean max errors
  for r in "${want[@]}"; do
    f="$out/$r/report.json"
    [ -s "$f" ] || continue
    jq -r --arg run "$r" '.fault_stats[]? | [$run, .fault, .rounds, ((.mean_round_ns / 1e8 | round) / 10), ((.max_round_ns / 1e8 | round) / 10), .errors] | @tsv' "$f" |
      awk -F'\t' '{printf "%-6s %-22s %7s %7s %7s %7s\n", $1, $2, $3, $4, $5, $6}'
  done
  errs=$(for r in "${want[@]}"; do f="$out/$r/report.json"; [ -s "$f" ] &&
    jq -r --arg run "$r" '.faults[] | select(.error != null and .error != "") | "  \($run) round \(.round) \(.fault): \(.error)"' "$f"; done || true)
  if [ -n "$errs" ]; then echo; echo "faults that reported an error:"; echo "$errs"; fi
  echo
  echo "reports: $out/<run>/report.txt, report.json, timeline.svg; commands: $out/<run>/command.txt"
} | tee "$summary"
