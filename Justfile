# Vigil task runner: `just --list` shows the recipes.
set shell := ["bash", "-euo", "pipefail", "-c"]

# Run every test (the README's command; CI runs it through .ci/run).
test:
    go test ./...

# Run every test under the race detector.
race:
    go test -race -timeout 20m ./...

# Run the Ginkgo multi-process suites only; narrow them with labels, e.g.
# `just integration 'interop && !slow'`.
integration labels="":
    #!/usr/bin/env bash
    set -euo pipefail
    labels={{quote(labels)}}
    if [ -n "$labels" ]; then
        go test -timeout 20m ./integration/... -ginkgo.v -ginkgo.label-filter="$labels"
    else
        go test -timeout 20m ./integration/... -ginkgo.v
    fi

# Fuzz every Fuzz* target in the module (FuzzReader in ./internal/resp,
# FuzzCommands in ./server: random commands through the dispatch with
# keyspace.Check after each, and any other), each for `time`, one after the
# other.
fuzz time="30s":
    #!/usr/bin/env bash
    set -euo pipefail
    found=0
    while IFS= read -r file; do
        dir="./$(dirname "$file")"
        for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]*)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(/\1/'); do
            found=1
            echo "=== $target in $dir for {{time}}"
            go test -run '^$' -fuzz "^${target}\$" -fuzztime '{{time}}' "$dir"
        done
    done < <(grep -rlE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . | sed 's|^\./||' | sort)
    if [ "$found" = 0 ]; then echo "no Fuzz targets found"; exit 1; fi

# The randomized differential tests against redis-server with more seeds
# than CI runs: `seeds` streams per type (VIGIL_DIFF_SEEDS: CI's seed, then
# base+1, base+2, ...) and `random_seeds` streams of TestRandomDifferential
# (VIGIL_RANDOM_SEEDS). A failing subtest names its seed: replay it alone
# with VIGIL_DIFF_SEED=S go test -run 'TestXDifferentialRandom' ./server/.
nightly seeds="20" base="1000" random_seeds="50":
    VIGIL_DIFF_SEEDS={{seeds}} VIGIL_DIFF_SEED_BASE={{base}} VIGIL_RANDOM_SEEDS={{random_seeds}} go test -count=1 -timeout 180m -run 'DifferentialRandom|RandomDifferential' ./server/

# gofmt must have nothing to say, and go vet must pass.
lint:
    #!/usr/bin/env bash
    set -euo pipefail
    unformatted="$(gofmt -l .)"
    if [ -n "$unformatted" ]; then echo "gofmt -l:"; echo "$unformatted"; exit 1; fi
    go vet ./...

# Benchmarks against vigil-server (and Debian's redis-server where installed):
# redis-benchmark with -r 100000 (random keys and members, so values grow),
# then the same tests on fixed keys as a second table (scripts/bench.sh:
# KEYSPACE=0 for the fixed-key table only, ROUNDS=3 for paired rounds).
bench *args:
    scripts/bench.sh {{args}}

# Start a local deployment (1 master, 2 replicas, 3 sentinels) with a live
# status view (pass flags: `just up --base-port 7000`).
up *args:
    go run ./cmd/vigil up {{args}}

# Start one vigil-server on the default port (pass flags: `just server --port 7000`).
server *args:
    go run ./cmd/vigil-server {{args}}

# A failure drill (pass flags: `just drill --fault all --rounds 5 --report drill-report`).
drill *args:
    go run ./cmd/vigil drill {{args}}

# Issue 23's proof (scripts/proof-run.sh): one seeded schedule on vigil with
# sync-ack mode on (--expect-no-loss), off, and on Debian's redis-server and
# redis-sentinel, over network namespaces; prints lost/acknowledged,
# linearizability and unavailability per run (`just proof -r 3 -f split`).
proof *args:
    scripts/proof-run.sh {{args}}

# Failover time of vigil-sentinel against redis-sentinel: `runs` SIGKILLs of
# the master each (down-after-milliseconds 1000), medians and their ratio.
# VIGIL_SENTINEL_BIN=... picks another sentinel build.
bench-failover runs="5":
    VIGIL_BENCH=1 VIGIL_BENCH_RUNS={{runs}} go test -count=1 -timeout 30m ./integration/sentinel/ -v -ginkgo.label-filter=bench

# bench-failover with vigil-server as the data servers (vigil-sentinel and
# redis-sentinel each fail over a vigil-server fleet); `just bench-failover`
# is the same over redis-server.
bench-failover-vigil runs="5":
    #!/usr/bin/env bash
    set -euo pipefail
    bindir="$(mktemp -d)"
    trap 'rm -rf "$bindir"' EXIT
    go build -o "$bindir/vigil-server" ./cmd/vigil-server
    VIGIL_DATA_SERVER_BIN="$bindir/vigil-server" VIGIL_BENCH=1 VIGIL_BENCH_RUNS={{runs}} go test -count=1 -timeout 30m ./integration/sentinel/ -v -ginkgo.label-filter=bench

# Failover time of whole stacks in one run: vigil-sentinel failing over
# vigil-server fleets against redis-sentinel failing over redis-server fleets
# (the order alternating), `runs` SIGKILLs of the master each.
bench-failover-stacks runs="5":
    #!/usr/bin/env bash
    set -euo pipefail
    bindir="$(mktemp -d)"
    trap 'rm -rf "$bindir"' EXIT
    go build -o "$bindir/vigil-server" ./cmd/vigil-server
    VIGIL_DATA_SERVER_BIN="$bindir/vigil-server" VIGIL_BENCH_REF_DATA_SERVER_BIN="$(command -v redis-server)" VIGIL_BENCH=1 VIGIL_BENCH_RUNS={{runs}} go test -count=1 -timeout 30m ./integration/sentinel/ -v -ginkgo.label-filter=bench

# BGSAVE without stopping the world: vigil-server and redis-server with
# `keys` keys each, GET/SET p50/p99 and throughput without and during a
# BGSAVE, the BGSAVE durations and vigil's RSS growth, side by side.
bench-save keys="1000000" seconds="5" clients="8" pipeline="1":
    VIGIL_BENCH=1 VIGIL_BENCH_KEYS={{keys}} VIGIL_BENCH_SECONDS={{seconds}} VIGIL_BENCH_CLIENTS={{clients}} VIGIL_BENCH_PIPELINE={{pipeline}} go test -count=1 -timeout 60m ./integration/benchsave/ -v -run TestBenchSave

# Resident memory after loading 1 M small strings, a 1 M-field hash, a 1 M-member
# set and a 1 M-member sorted set: a fresh vigil-server and redis-server per
# dataset, same data, VmRSS side by side with the ratio (target <= 1.3x).
# `datasets` is a comma-separated subset of strings,hash,set,zset.
bench-mem n="1000000" datasets="":
    VIGIL_BENCH=1 VIGIL_BENCH_N={{n}} VIGIL_BENCH_DATASETS={{datasets}} go test -count=1 -timeout 30m ./integration/benchmem/ -v -run TestBenchMem

# Resident memory per connection: 5000 idle connections (one PING each), 1000
# that each sent 16 SETs of 16 KB, 1000 that each read 16 GETs of 16 KB; a fresh
# vigil-server and redis-server each, RSS 20 s after, side by side with the
# ratio (integration/benchclients/doc.go).
bench-clients conns="5000" big="1000" settle="20":
    VIGIL_BENCH=1 VIGIL_BENCH_CONNS={{conns}} VIGIL_BENCH_BIG={{big}} VIGIL_BENCH_SETTLE={{settle}} go test -count=1 -timeout 30m ./integration/benchclients/ -v -run TestBenchClients

# Replication: full sync of `keys` keys (vigil vs redis-server, same run),
# What one write costs in a key of 100, 1 k, 100 k and 1 M elements, per type
# (string, list, hash, set, zset, stream), vigil-server against redis-server in
# the same run (integration/benchscale/doc.go): `just bench-scale 1000,100000 3`;
# `types` narrows it (`just bench-scale 1000 3 100000 zset,stream`).
bench-scale sizes="100,1000,100000,1000000" rounds="3" pairs="100000" types="":
    VIGIL_BENCH=1 VIGIL_BENCH_TYPES={{types}} VIGIL_BENCH_SIZES={{sizes}} VIGIL_BENCH_ROUNDS={{rounds}} VIGIL_BENCH_PAIRS={{pairs}} go test -count=1 -timeout 60m ./integration/benchscale/ -v -run TestBenchScale

# SET throughput at redis-benchmark -P 16 with two replicas attached vs
# none, and the replicas' lag under that load; ratios printed.
bench-repl keys="1000000" requests="2000000" clients="50":
    VIGIL_BENCH=1 VIGIL_BENCH_KEYS={{keys}} VIGIL_BENCH_REQUESTS={{requests}} VIGIL_BENCH_CLIENTS={{clients}} go test -count=1 -timeout 60m ./integration/benchrepl/ -v -run TestBenchRepl

# SET + WAIT 1 latency, one client, one replica, on the four pairings of
# vigil-server and redis-server as master/replica (integration/benchrepl).
bench-wait n="2000" rounds="3":
    VIGIL_BENCH=1 VIGIL_BENCH_WAIT_N={{n}} VIGIL_BENCH_ROUNDS={{rounds}} go test -count=1 -timeout 60m ./integration/benchrepl/ -v -run TestBenchWait

# Tail latency (issue 24): redis-benchmark p99, p99.9 and max of GET, SET,
# LPUSH, ZADD at -c 50, -P 1 and -P 16, empty and with 1 M keys, paired with
# redis-server, ratios printed (scripts/bench-tail.sh: ROUNDS, LOADS, ...).
bench-tail rounds="3":
    ROUNDS={{rounds}} scripts/bench-tail.sh

# Lua scripts users write (server/lua/bench_test.go's benchScripts), one
# EVAL each, timed on redis-server and vigil-server side by side; replies
# compared (scripts/bench-lua.sh: ROUNDS, SCRIPTS, SCALE).
bench-lua rounds="3":
    ROUNDS={{rounds}} scripts/bench-lua.sh

# TLS: redis-benchmark --tls SET and GET at -P 1 and -P 16 against
# redis-server and vigil-server with the same certificates
# (scripts/bench-tls.sh: ROUNDS, N; needs openssl).
bench-tls rounds="3":
    ROUNDS={{rounds}} scripts/bench-tls.sh

# Build the container image FROM scratch (deploy/docker/Dockerfile) holding the
# three static binaries built with the host's Go: `just docker-image vigil:dev`.
docker-image tag="vigil:dev":
    scripts/docker-image.sh {{quote(tag)}}
