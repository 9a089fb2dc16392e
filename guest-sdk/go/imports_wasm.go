//go:build wasm

package wf

import "unsafe"

// The wfhost host functions (abi/ABI.md §4). Pointers are offsets in this module's memory.

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

// addr is the memory offset of b's first byte (0 for an empty slice).
func addr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}
