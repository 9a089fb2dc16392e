package main

import (
	"github.com/wfhost/wfhost/examples/wasm/go/probes"
	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

func init() {
	wf.Register(wf.Workflow[struct{}, probes.Observed]{Name: "determinism", Version: "1", Run: probes.Determinism})
	// panic panics in its body or in a step: the SDK's panic error, its stack in details.
	wf.Register(wf.Workflow[probes.PanicInput, int]{Name: "panic", Version: "1", Run: probes.Panic})
}
