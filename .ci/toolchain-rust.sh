#!/usr/bin/env bash
# Installs Debian's Rust toolchain for the Rust guest (testdata/build-rust.sh) when it is missing:
# rustc, the wasm32-unknown-unknown standard library, lld, which links wasm, and cargo, which
# builds the projects `wfhost init --lang rust` writes (cmd/wfhost/init_test.go). Idempotent.
# Debian's rustc is what the committed fixture was built with; a rustup rustc elsewhere on PATH
# is left alone (build-rust.sh calls /usr/bin/rustc).
set -euo pipefail
if [ -x /usr/bin/rustc ] && [ -d "$(/usr/bin/rustc --print sysroot)/lib/rustlib/wasm32-unknown-unknown" ] \
  && dpkg -s lld cargo >/dev/null 2>&1; then
  /usr/bin/rustc --version
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q rustc libstd-rust-dev-wasm32 lld cargo
/usr/bin/rustc --version
