#!/usr/bin/env bash
# Builds the Go examples with TinyGo into testdata/tinygo/ (not committed: TinyGo is built on the
# machine from its module, not a pinned package). The engine's conformance suite runs the result
# beside the committed fixtures, and requires it under WFHOST_REQUIRE_TINYGO (CI). Needs TinyGo
# 0.41 as guest-sdk/go/tinygo/install.sh sets it up (.ci/toolchain-tinygo.sh runs both).
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
TINYGOROOT=${TINYGOROOT:-/opt/tinygo}
tinygo=${TINYGO:-$TINYGOROOT/build/tinygo}
[ -x "$tinygo" ] || { echo "TinyGo not found at $tinygo: run guest-sdk/go/tinygo/install.sh (or set TINYGO)"; exit 1; }
export TINYGOROOT GOWORK=off GOFLAGS=-buildvcs=false
export PATH=/usr/lib/llvm-19/bin:$PATH
export WASMOPT=${WASMOPT:-$TINYGOROOT/binaryen/node_modules/binaryen/bin/wasm-opt}
mkdir -p testdata/tinygo
# -scheduler=none (in the target): the asyncify scheduler costs 10-165 µs on every exported call.
(cd examples/wasm/go && "$tinygo" build -target="$root/guest-sdk/go/tinygo/wasip1-debian.json" \
  -buildmode=c-shared -no-debug -o "$root/testdata/tinygo/examples.wasm" .)
ls -l testdata/tinygo/*.wasm
