#!/usr/bin/env bash
# Installs the OpenAPI linter `make lint` runs on api/openapi.json: Redocly CLI, at the exact
# version pinned in api/lint/package-lock.json (api/RATIONALE.md, "Lint"). Idempotent: apt skips
# an installed package, npm ci replaces node_modules with exactly the lock's tree (from npm's
# cache when it has it).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends nodejs npm
fi
(cd api/lint && npm ci --no-audit --no-fund --loglevel=error)
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true api/lint/node_modules/.bin/redocly --version
