// Package wasmgen writes WebAssembly binaries for tests, from Go: a small encoder (Module),
// a minimal module that speaks the native wfhost ABI (Workflow), and the hostile modules an
// upload or a run must survive (hostile.go): decoder and compiler bombs of several shapes,
// spec violations wazero lets through, traps in every export, memory and stack abuse and ABI
// misuse. Generating them at test time keeps multi-megabyte bombs out of the repository and
// each one's shape next to what it attacks. The run-time abuse of a real Go guest stays in
// testdata/hostile.wasm (examples/wasm/go/hostile, internal/testenv/hostile.go).
//
// Only tests, internal/testenv and cmd/wfbench import it. It imports abi and the standard
// library.
package wasmgen
