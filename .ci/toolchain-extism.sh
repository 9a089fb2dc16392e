#!/usr/bin/env bash
# Toolchain of the Extism AssemblyScript fixture (testdata/build-extism.sh): the exact
# assemblyscript and @extism/as-pdk of examples/wasm/extism-as/package-lock.json, from npm.
# Idempotent: npm ci runs again only when the lock file changed since the last install. The Go
# fixture needs nothing beyond Go (go-pdk comes from the module proxy).
set -euo pipefail
cd "$(dirname "$0")/../examples/wasm/extism-as"
if ! command -v npm >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q nodejs npm
fi
stamp=node_modules/.wfhost-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -x node_modules/.bin/asc ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "extism-as: node_modules matches package-lock.json"
  exit 0
fi
npm ci --no-audit --no-fund
echo "$want" >"$stamp"
