#!/usr/bin/env bash
# Installs the AssemblyScript toolchain of guest-sdk/assemblyscript and
# examples/wasm/assemblyscript: the compiler version pinned in their package-lock.json files,
# from the npm registry. Idempotent: npm ci replaces node_modules with exactly the lock's tree.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null; then
  echo "installing Node.js and npm"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q nodejs npm
fi
node --version
for dir in guest-sdk/assemblyscript examples/wasm/assemblyscript; do
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
done
