#!/usr/bin/env bash
# Builds the AssemblyScript fixtures from examples/wasm/assemblyscript with the compiler pinned
# in its package-lock.json: examples_as.wasm (the four example workflows of examples.wasm) and
# capabilities_as.wasm (outbound HTTP, secrets and the SDK's edges). It installs nothing:
# .ci/toolchain-assemblyscript.sh runs npm ci. The compiler options are in the example's
# asconfig.json; the output holds only paths relative to the package, so a clone anywhere
# builds the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=examples/wasm/assemblyscript
if [ ! -x "$dir/node_modules/.bin/asc" ]; then
  echo "build-assemblyscript.sh: $dir/node_modules/.bin/asc is missing; run .ci/toolchain-assemblyscript.sh" >&2
  exit 1
fi
cd "$dir"
node_modules/.bin/asc assembly/index.ts --config asconfig.json --outFile ../../../testdata/examples_as.wasm
node_modules/.bin/asc capabilities/index.ts --config asconfig.json --outFile ../../../testdata/capabilities_as.wasm
