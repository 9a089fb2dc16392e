//go:build !wasm

package wf

// Outside wasm there is no host: the SDK's pure parts (registration, describe, error mapping)
// still build and test, and any durable call says where it must run.

func noHost() {
	panic("wfhost guest SDK: durable calls work only in a wasm module run by wfhost")
}

func callStepRun(_, _ []byte) (int32, []byte)          { noHost(); return 0, nil }
func callStepDone(_ uint32, _ []byte) (int32, []byte)  { noHost(); return 0, nil }
func callSleep(_ []byte, _ int64) (int32, []byte)      { noHost(); return 0, nil }
func callSleepUntil(_ []byte, _ int64) (int32, []byte) { noHost(); return 0, nil }
func callWaitEvent(_, _ []byte) (int32, []byte)        { noHost(); return 0, nil }
func callLog(_ uint32, _ []byte)                       { noHost() }
func callComplete(_ []byte)                            { noHost() }
func callFail(_ []byte)                                { noHost() }
func callHTTPRequest(_ []byte) (int32, []byte)         { noHost(); return 0, nil }
func callSecretGet(_ []byte) (int32, []byte)           { noHost(); return 0, nil }
func callEventSend(_ []byte) (int32, []byte)           { noHost(); return 0, nil }
func callContinueAsNew(_ []byte)                       { noHost() }
func callChildRun(_, _ []byte) (int32, []byte)         { noHost(); return 0, nil }
func callQueryRespond(_ uint32, _ []byte)              { noHost() }
func callParallelRun(_, _ []byte) (int32, []byte)      { noHost(); return 0, nil }
func callBranchDone(_ uint32, _ []byte)                { noHost() }
