#!/usr/bin/env bash
# Builds testdata/examples_rust.wasm (examples/wasm/rust against guest-sdk/rust) with Debian's
# rustc for wasm32-unknown-unknown, reproducibly: the same toolchain gives the same bytes
# wherever the repository is cloned. Installs nothing (.ci/toolchain-rust.sh does).
#
# The SDK is built as an rlib and linked with --extern, as cargo would; cargo is not needed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# Debian's rustc, not a rustup one earlier on PATH: the committed fixtures are the output of
# Debian 12's rustc 1.63 and of the wasm32 standard library it ships (libstd-rust-dev-wasm32);
# another version builds different bytes, which `make testdata/check` reports.
rustc=${WFHOST_RUSTC:-/usr/bin/rustc}
if ! [ -x "$rustc" ] || ! [ -d "$("$rustc" --print sysroot)/lib/rustlib/wasm32-unknown-unknown" ]; then
  echo "build-rust.sh: needs $rustc with the wasm32-unknown-unknown standard library;" \
    "run .ci/toolchain-rust.sh (apt-get install rustc libstd-rust-dev-wasm32 lld)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Source paths are given relative to the root and both the root and the scratch directory are
# remapped, so no path of this machine reaches the output (panic messages carry file names).
flags=(--edition 2021 --target wasm32-unknown-unknown
  -C opt-level=s -C panic=abort -C codegen-units=1 -C lto=fat -C strip=symbols -C link-arg=-zstack-size=262144
  --remap-path-prefix "$root=." --remap-path-prefix "$tmp=build")
"$rustc" "${flags[@]}" --crate-type rlib --crate-name wfhost -o "$tmp/libwfhost.rlib" guest-sdk/rust/src/lib.rs
module() { # module OUTPUT SOURCE
  "$rustc" "${flags[@]}" --crate-type cdylib --crate-name "${1%.wasm}" --extern wfhost="$tmp/libwfhost.rlib" -o "$tmp/$1" "$2"
  install -m 0644 "$tmp/$1" "testdata/$1"
}
module examples_rust.wasm examples/wasm/rust/main.rs
module capabilities_rust.wasm examples/wasm/rust/capabilities/main.rs
