// Package testdata holds the committed .wasm fixtures, built from examples/wasm by build.sh and
// the build-*.sh scripts it runs (make testdata). Tests read them from here.
//
//   - examples.wasm (standard Go), examples_rust.wasm, examples_as.wasm (AssemblyScript),
//     extism_go.wasm and extism_as.wasm (Extism PDKs): the same workflows (onboarding,
//     order-saga, poll, steps) in every language, for the engine's conformance suite.
//     extism_go.wasm is the Go examples built with -tags extism, with three workflows of the
//     Extism door's own tests (http-fetch; extism-http, Extism's own HTTP under the tenant's
//     policy; determinism).
//   - examples_renamed.wasm: examples.wasm with one step renamed, for nondeterminism tests.
//   - examples_appended.wasm: examples.wasm with onboarding as version 2, a step appended after
//     its last wait (a replay-compatible change), for the upgrade gate's tests.
//   - hostile.wasm: guests that misbehave on purpose (spin, memory bomb, traps, ABI abuse).
//   - capabilities.wasm, capabilities_rust.wasm, capabilities_as.wasm: outbound HTTP and
//     secrets from step callbacks, and the ways a secret could leak.
//   - probe.wasm: writes a secret (or bytes it is given) wherever and in whatever encoding its
//     input says, for the leak matrix and the storability tests.
//   - tinygo/ (not committed): the Go examples built with TinyGo by make testdata/tinygo.
package testdata
