#!/usr/bin/env bash
# Build the Vigil container image (deploy/docker/Dockerfile) FROM scratch:
# compile vigil-server, vigil-sentinel and vigil statically with the host's Go
# into a temporary context directory, then `docker build` it. Nothing is pulled.
#
#   scripts/docker-image.sh [tag]       (default tag: vigil:dev)
set -euo pipefail
tag="${1:-vigil:dev}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
cd "$root"
# vigil-server links glibc's libm statically when a C compiler and the static
# C library are there (gcc, libc6-dev): geo distances then have redis-server's
# digits (server/geo/libm_cgo.go); the pure Go resolver and user lookup
# (netgo, osusergo) keep it free of glibc's NSS. Otherwise it is built without
# cgo, with correctly rounded distances (README, "Not there yet").
if ! CGO_ENABLED=1 go build -trimpath -tags netgo,osusergo \
    -ldflags '-linkmode external -extldflags -static' -o "$ctx/vigil-server" ./cmd/vigil-server 2>"$ctx/cgo.err"; then
    echo "docker-image: no static cgo build (apt-get install -y gcc libc6-dev): vigil-server built without cgo:" >&2
    tail -3 "$ctx/cgo.err" >&2
    CGO_ENABLED=0 go build -trimpath -o "$ctx/vigil-server" ./cmd/vigil-server
fi
rm -f "$ctx/cgo.err"
for bin in vigil-sentinel vigil; do
    CGO_ENABLED=0 go build -trimpath -o "$ctx/$bin" "./cmd/$bin"
done
mkdir -p "$ctx/data"
: >"$ctx/data/sentinel.conf"
cp deploy/docker/Dockerfile "$ctx/Dockerfile"
docker build -q -t "$tag" "$ctx"
