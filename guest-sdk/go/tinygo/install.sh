#!/usr/bin/env bash
# Sets up TinyGo 0.41 on Debian 12 from what this machine's registries serve (Debian's packages,
# the Go module proxy, npm) into $TINYGOROOT (default /opt/tinygo). About 600 MB; on a 2-core
# machine with a near mirror about a minute (the packages, then 30 s to build TinyGo).
# CI runs it (.ci/toolchain-tinygo.sh); a second run finds everything in place and does nothing.
#
# Debian has no tinygo package, so TinyGo is built from its module (LLVM 19 from Debian). The
# module zip leaves out TinyGo's git submodules, which this works around:
#   - wasi-libc and compiler-rt: guest-sdk/go/tinygo/wasip1-debian.json links Debian's prebuilt
#     libc.a (wasi-libc) and clang's wasm32 builtins instead of building them;
#   - src/net: an empty directory stands in (so guests cannot import net);
#   - wasm-opt: binaryen from npm.
set -euo pipefail
TINYGOROOT=${TINYGOROOT:-/opt/tinygo}
version=0.41.0
export DEBIAN_FRONTEND=noninteractive
if ! dpkg -s llvm-19-dev libclang-19-dev liblld-19-dev clang-19 wasi-libc libclang-rt-19-dev-wasm32 >/dev/null 2>&1; then
  apt-get update -q
  apt-get install -y -q llvm-19-dev libclang-19-dev liblld-19-dev clang-19 wasi-libc libclang-rt-19-dev-wasm32
fi
if [ ! -x "$TINYGOROOT/build/tinygo" ]; then
  src=$(GOWORK=off GOFLAGS= go mod download -json "github.com/tinygo-org/tinygo@v$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  rm -rf "$TINYGOROOT"
  cp -r "$src" "$TINYGOROOT"
  chmod -R u+w "$TINYGOROOT"
  mkdir -p "$TINYGOROOT/src/net"
  (cd "$TINYGOROOT" && GOWORK=off GOFLAGS= go build -tags llvm19 -o build/tinygo .)
fi
if [ ! -x "$TINYGOROOT/binaryen/node_modules/binaryen/bin/wasm-opt" ]; then
  npm install --prefix "$TINYGOROOT/binaryen" binaryen@125.0.0
fi
TINYGOROOT=$TINYGOROOT "$TINYGOROOT/build/tinygo" version
