#!/usr/bin/env bash
# Rebuilds every committed .wasm fixture from its source, reproducibly: the same toolchain gives
# byte-identical files, so CI can check that the committed fixtures match their source.
set -euo pipefail
cd "$(dirname "$0")/.."
out=testdata
export GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOOS=wasip1 GOARCH=wasm
build() { # build OUTPUT DIR [TAGS]
  (cd "$2" && go build -buildmode=c-shared -trimpath -ldflags='-s -w -buildid=' ${3:+-tags "$3"} -o "$OLDPWD/$out/$1" .)
}
build examples.wasm examples/wasm/go
build examples_renamed.wasm examples/wasm/go renamed
build examples_appended.wasm examples/wasm/go appended
build hostile.wasm examples/wasm/go/hostile
build capabilities.wasm examples/wasm/go/capabilities
build probe.wasm examples/wasm/go/probe
# Guests in other languages (and other doors) have a build script each, which installs nothing:
# .ci/toolchain-*.sh installs their toolchains.
for extra in testdata/build-*.sh; do
  if [ -e "$extra" ]; then (unset GOOS GOARCH; bash "$extra"); fi
done
ls -l "$out"/*.wasm
