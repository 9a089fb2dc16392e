//go:build !wasm

package wf

// Outside wasm there is no host: the SDK's pure parts (registration, describe, error mapping)
// still build and test, and any durable call says where it must run.

func noHost() uint64 {
	panic("wfhost guest SDK: durable calls work only in a wasm module run by wfhost")
}

func hostStepRun(_, _, _, _ uint32) uint64       { return noHost() }
func hostStepDone(_, _, _ uint32) uint64         { return noHost() }
func hostSleep(_, _ uint32, _ int64) uint64      { return noHost() }
func hostSleepUntil(_, _ uint32, _ int64) uint64 { return noHost() }
func hostWaitEvent(_, _, _, _ uint32) uint64     { return noHost() }
func hostTake(_, _ uint32)                       { noHost() }
func hostLog(_, _, _ uint32)                     { noHost() }
func hostComplete(_, _ uint32)                   { noHost() }
func hostFail(_, _ uint32)                       { noHost() }
func hostHTTPRequest(_, _ uint32) uint64         { return noHost() }
func hostSecretGet(_, _ uint32) uint64           { return noHost() }
func addr(b []byte) uint32                       { return 0 }
