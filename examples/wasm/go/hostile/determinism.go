package main

import (
	"github.com/wfhost/wfhost/examples/wasm/go/probes"
	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

func init() {
	wf.Register(wf.Workflow[struct{}, probes.Observed]{Name: "determinism", Version: "1", Run: probes.Determinism})
}
