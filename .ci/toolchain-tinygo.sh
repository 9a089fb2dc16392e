#!/usr/bin/env bash
# TinyGo, a first-class guest: guest-sdk/go/tinygo/install.sh sets up TinyGo 0.41 in /opt/tinygo
# (Debian's LLVM 19, TinyGo built from its Go module; about a minute the first time, nothing
# once /opt/tinygo holds it), then the Go examples are built with it into testdata/tinygo/
# (about 9 s).
# .ci/run sets WFHOST_REQUIRE_TINYGO, so the conformance suite fails rather than leaving the
# TinyGo build out, and WFHOST_REQUIRE_TOOLCHAINS, so `wfhost init --lang tinygo`'s test builds
# with it. Needs npm (toolchain-assemblyscript.sh) for binaryen's wasm-opt. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash guest-sdk/go/tinygo/install.sh
bash guest-sdk/go/tinygo/build.sh
