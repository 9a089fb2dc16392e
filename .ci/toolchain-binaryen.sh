#!/usr/bin/env bash
# binaryen's wasm-opt, which host/snapshot's tests use to asyncify the example modules (the
# prototype of durable snapshots: host/snapshot/RATIONALE.md). Without it those tests skip;
# CI installs it so they run. Idempotent.
set -euo pipefail
if command -v wasm-opt >/dev/null; then
  wasm-opt --version
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q binaryen
wasm-opt --version
