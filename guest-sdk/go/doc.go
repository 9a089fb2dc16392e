// Package wf is the Go guest SDK of wfhost: it turns Go functions into durable workflows that
// run inside the wfhost sandbox. Register workflows from init functions; build the module with
// GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared.
//
// A workflow body runs from the top on every activation; Step, Sleep and WaitForEvent return
// what the journal recorded when they were reached before, and run (or wait) for real only the
// first time. Outside step callbacks the body must be deterministic; the host makes time.Now,
// math/rand, crypto/rand and map order deterministic there, so ordinary Go code is.
//
// The SDK speaks ABI v1 (abi/ABI.md in the wfhost repository) with nothing but the standard
// library. Built with -tags extism, the same module becomes an Extism plug-in (abi/ABI.md §9):
// only the transport changes (extism_wasm.go, on Extism's Go PDK, the one dependency, linked
// only with that tag). It avoids goroutines and reflection beyond encoding/json so TinyGo
// (-scheduler=none) can build it too.
package wf
