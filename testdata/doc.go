// Package testdata holds the committed .wasm fixtures, built from examples/wasm by build.sh
// (make testdata): examples.wasm (onboarding, order-saga, poll, steps), examples_renamed.wasm
// (the same module with one step renamed, for nondeterminism tests) and hostile.wasm (guests
// that misbehave on purpose). Tests read them from here.
package testdata
