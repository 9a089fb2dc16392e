//go:build wasm && !extism

package wf

import "unsafe"

// The native transport: the wfhost host functions of abi/ABI.md §4, data passed as
// (pointer, length) in this module's memory and replies collected with take. The Extism
// transport (extism_wasm.go, build tag extism) carries the same calls in Extism memory blocks.

//go:wasmimport wfhost step_run
func hostStepRun(namePtr, nameLen, optsPtr, optsLen uint32) uint64

//go:wasmimport wfhost step_done
func hostStepDone(outcome, dataPtr, dataLen uint32) uint64

//go:wasmimport wfhost sleep
func hostSleep(namePtr, nameLen uint32, durationMs int64) uint64

//go:wasmimport wfhost sleep_until
func hostSleepUntil(namePtr, nameLen uint32, unixMs int64) uint64

//go:wasmimport wfhost wait_event
func hostWaitEvent(namePtr, nameLen, optsPtr, optsLen uint32) uint64

//go:wasmimport wfhost take
func hostTake(ptr, n uint32)

//go:wasmimport wfhost log
func hostLog(level, ptr, n uint32)

//go:wasmimport wfhost complete
func hostComplete(ptr, n uint32)

//go:wasmimport wfhost fail
func hostFail(ptr, n uint32)

//go:wasmimport wfhost http_request
func hostHTTPRequest(reqPtr, reqLen uint32) uint64

//go:wasmimport wfhost secret_get
func hostSecretGet(namePtr, nameLen uint32) uint64

//go:wasmimport wfhost event_send
func hostEventSend(reqPtr, reqLen uint32) uint64

//go:wasmimport wfhost child_run
func hostChildRun(namePtr, nameLen, reqPtr, reqLen uint32) uint64

//go:wasmimport wfhost continue_as_new
func hostContinueAsNew(reqPtr, reqLen uint32)

//go:wasmimport wfhost query_respond
func hostQueryRespond(outcome, dataPtr, dataLen uint32)

//go:wasmimport wfhost parallel_run
func hostParallelRun(namePtr, nameLen, reqPtr, reqLen uint32) uint64

//go:wasmimport wfhost branch_done
func hostBranchDone(outcome, dataPtr, dataLen uint32)

// addr is the memory offset of b's first byte (0 for an empty slice).
func addr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// take collects the data a host reply left pending.
func take(reply uint64) (status int32, data []byte) {
	status, n := int32(uint32(reply)), uint32(reply>>32)
	if n > 0 {
		data = make([]byte, n)
		hostTake(addr(data), n)
	}
	return status, data
}

func callStepRun(name, opts []byte) (int32, []byte) {
	return take(hostStepRun(addr(name), uint32(len(name)), addr(opts), uint32(len(opts))))
}

func callStepDone(outcome uint32, data []byte) (int32, []byte) {
	return take(hostStepDone(outcome, addr(data), uint32(len(data))))
}

func callSleep(name []byte, ms int64) (int32, []byte) {
	return take(hostSleep(addr(name), uint32(len(name)), ms))
}

func callSleepUntil(name []byte, unixMs int64) (int32, []byte) {
	return take(hostSleepUntil(addr(name), uint32(len(name)), unixMs))
}

func callWaitEvent(name, opts []byte) (int32, []byte) {
	return take(hostWaitEvent(addr(name), uint32(len(name)), addr(opts), uint32(len(opts))))
}

func callLog(level uint32, msg []byte) { hostLog(level, addr(msg), uint32(len(msg))) }

func callComplete(out []byte) { hostComplete(addr(out), uint32(len(out))) }

func callFail(info []byte) { hostFail(addr(info), uint32(len(info))) }

func callHTTPRequest(req []byte) (int32, []byte) {
	return take(hostHTTPRequest(addr(req), uint32(len(req))))
}

func callSecretGet(name []byte) (int32, []byte) {
	return take(hostSecretGet(addr(name), uint32(len(name))))
}

func callEventSend(req []byte) (int32, []byte) {
	return take(hostEventSend(addr(req), uint32(len(req))))
}

func callContinueAsNew(req []byte) { hostContinueAsNew(addr(req), uint32(len(req))) }

func callChildRun(name, req []byte) (int32, []byte) {
	return take(hostChildRun(addr(name), uint32(len(name)), addr(req), uint32(len(req))))
}

func callQueryRespond(outcome uint32, data []byte) {
	hostQueryRespond(outcome, addr(data), uint32(len(data)))
}

func callParallelRun(name, req []byte) (int32, []byte) {
	return take(hostParallelRun(addr(name), uint32(len(name)), addr(req), uint32(len(req))))
}

func callBranchDone(outcome uint32, data []byte) {
	hostBranchDone(outcome, addr(data), uint32(len(data)))
}
