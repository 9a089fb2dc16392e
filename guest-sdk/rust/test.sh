#!/usr/bin/env bash
# Runs the Rust guest SDK's unit tests (JSON, base64, HTTP wire shapes) and the examples' SHA-256
# test on the host, with Debian's rustc (see testdata/build-rust.sh for why that one).
set -euo pipefail
cd "$(dirname "$0")/../.."
rustc=${WFHOST_RUSTC:-/usr/bin/rustc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$rustc" --edition 2021 --test --crate-name wfhost -o "$tmp/sdk" guest-sdk/rust/src/lib.rs
"$tmp/sdk" -q
"$rustc" --edition 2021 --test --crate-name sha256 -o "$tmp/sha256" examples/wasm/rust/sha256.rs
"$tmp/sha256" -q
