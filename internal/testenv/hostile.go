package testenv

import "github.com/wfhost/wfhost/abi"

// HostileRun is how a run of one of testdata/hostile.wasm's workflows must fail when the
// tenant's activation limit is 10 s and its memory 256 pages: with Code, and a message that
// contains Contains.
type HostileRun struct {
	Workflow, Code, Contains string
}

// HostileRuns are the hostile workflows that must fail their own run and nothing else, for the
// engine's test and the end-to-end test of a daemon.
var HostileRuns = []HostileRun{
	{"spin", abi.CodeDeadline, ""},
	{"membomb", abi.CodeTrap, "out of memory"},
	{"trap", abi.CodeTrap, ""},
	{"oob", abi.CodeABIViolation, "step_run"},
	{"bigoutput", abi.CodePayloadTooLarge, ""},
	{"bigstep", abi.CodePayloadTooLarge, ""},
}
