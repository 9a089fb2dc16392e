#!/usr/bin/env bash
# binaryen's wasm-opt, which makes modules snapshottable (durable snapshots: host/snapshots.go,
# engine/RATIONALE.md). Without it the daemon replays every run from the top and the snapshot
# tests skip; CI installs it and sets WFHOST_REQUIRE_WASM_OPT, so they run. Idempotent.
set -euo pipefail
if command -v wasm-opt >/dev/null; then
  wasm-opt --version
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q binaryen
wasm-opt --version
