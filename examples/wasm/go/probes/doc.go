// Package probes holds workflow bodies that the host's tests run in more than one build of the
// Go examples: the hostile module (examples/wasm/go/hostile) and the Extism build of the
// examples (-tags extism). Each build registers them under its own name.
package probes
