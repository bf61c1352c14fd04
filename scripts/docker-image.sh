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
for bin in vigil-server vigil-sentinel vigil; do
    CGO_ENABLED=0 go build -trimpath -o "$ctx/$bin" "./cmd/$bin"
done
mkdir -p "$ctx/data"
: >"$ctx/data/sentinel.conf"
cp deploy/docker/Dockerfile "$ctx/Dockerfile"
docker build -q -t "$tag" "$ctx"
