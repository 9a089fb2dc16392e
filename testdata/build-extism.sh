#!/usr/bin/env bash
# Builds the Extism fixtures (abi/ABI.md, "Extism modules") reproducibly, installing nothing:
# testdata/extism_go.wasm from examples/wasm/go built with -tags extism (the Go SDK's Extism
# transport, on Extism's Go PDK, standard Go) and
# testdata/extism_as.wasm from examples/wasm/extism-as (AssemblyScript with @extism/as-pdk;
# .ci/toolchain-extism.sh runs its npm ci). testdata/build.sh calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/testdata"

(cd examples/wasm/go &&
  GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOOS=wasip1 GOARCH=wasm \
    go build -buildmode=c-shared -trimpath -ldflags='-s -w -buildid=' -tags extism -o "$out/extism_go.wasm" .)

if [ ! -x examples/wasm/extism-as/node_modules/.bin/asc ]; then
  echo "build-extism.sh: examples/wasm/extism-as/node_modules is missing: run .ci/toolchain-extism.sh (npm ci)" >&2
  exit 1
fi
(cd examples/wasm/extism-as && node_modules/.bin/asc assembly/index.ts --config asconfig.json --target release \
  --outFile "$out/extism_as.wasm")
