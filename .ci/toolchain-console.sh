#!/usr/bin/env bash
# Installs what the console's browser tests (ui/browsertest, `make test/console`) need: Debian's
# Chromium, which Playwright drives headless (Playwright cannot download its own browsers here),
# and the playwright-core version pinned in ui/browsertest/package-lock.json. Idempotent: apt
# skips an installed package, npm ci replaces node_modules with exactly the lock's tree.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
chromium --version 2>/dev/null | tail -1
(cd ui/browsertest && npm ci --no-audit --no-fund --loglevel=error)
