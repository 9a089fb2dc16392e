package main

import (
	"unsafe"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

// Raw host imports, bypassing the SDK, to break the ABI on purpose.

//go:wasmimport wfhost step_done
func rawStepDone(outcome, ptr, n uint32) uint64

//go:wasmimport wfhost sleep
func rawSleep(namePtr, nameLen uint32, ms int64) uint64

//go:wasmimport wfhost wait_event
func rawWaitEvent(namePtr, nameLen, optsPtr, optsLen uint32) uint64

//go:wasmimport wfhost take
func rawTake(ptr, n uint32)

//go:wasmimport wfhost log
func rawLog(level, ptr, n uint32)

//go:wasmimport wfhost complete
func rawComplete(ptr, n uint32)

//go:wasmimport wfhost fail
func rawFail(ptr, n uint32)

//go:wasmimport wfhost continue_as_new
func rawContinueAsNew(ptr, n uint32)

func ptr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

type abuseInput struct {
	Case string `json:"case"`
}

// abuses holds one misuse of the ABI per case; each must fail the run with abi_violation (or,
// where the ABI says so, another clear code) and leave the host unharmed.
var abuses = map[string]func(){
	"name-with-hash":      func() { n := []byte("poll#1"); rawStepRun(ptr(n), uint32(len(n)), 0, 0) },
	"empty-name":          func() { rawStepRun(0, 0, 0, 0) },
	"long-name":           func() { n := make([]byte, 201); rawStepRun(ptr(n), uint32(len(n)), 0, 0) },
	"invalid-utf8-name":   func() { n := []byte{0xff, 0xfe}; rawStepRun(ptr(n), 2, 0, 0) },
	"bad-step-options":    func() { n, o := []byte("s"), []byte("{nope"); rawStepRun(ptr(n), 1, ptr(o), uint32(len(o))) },
	"huge-options-length": func() { n := []byte("s"); rawStepRun(ptr(n), 1, ptr(n), 0xffffffff) },
	"bad-retry-policy": func() {
		n, o := []byte("s"), []byte(`{"retry":{"attempts":-4}}`)
		rawStepRun(ptr(n), 1, ptr(o), uint32(len(o)))
	},
	"done-without-step": func() { rawStepDone(0, 0, 0) },
	"bad-outcome": func() {
		n := []byte("s")
		rawStepRun(ptr(n), 1, 0, 0)
		rawStepDone(7, 0, 0)
	},
	"output-not-json": func() {
		n, o := []byte("s"), []byte("not json")
		rawStepRun(ptr(n), 1, 0, 0)
		rawStepDone(0, ptr(o), uint32(len(o)))
	},
	"nested-step": func() {
		n := []byte("s")
		rawStepRun(ptr(n), 1, 0, 0)
		rawStepRun(ptr(n), 1, 0, 0)
	},
	"sleep-in-step": func() {
		n := []byte("s")
		rawStepRun(ptr(n), 1, 0, 0)
		rawSleep(ptr(n), 1, 10)
	},
	"take-nothing":      func() { b := make([]byte, 4); rawTake(ptr(b), 4) },
	"take-wrong-length": func() { n := []byte("s"); rawStepRun(ptr(n), 1, 0, 0); b := make([]byte, 99); rawTake(ptr(b), 99) },
	"take-out-of-bounds": func() {
		n := []byte("s")
		r := rawStepRun(ptr(n), 1, 0, 0)
		rawTake(0xfffffff0, uint32(r>>32))
	},
	"wait-bad-options": func() { n, o := []byte("w"), []byte(`[1,2]`); rawWaitEvent(ptr(n), 1, ptr(o), uint32(len(o))) },
	"wait-no-event":    func() { n, o := []byte("w"), []byte(`{}`); rawWaitEvent(ptr(n), 1, ptr(o), uint32(len(o))) },
	"wait-bad-match": func() {
		n, o := []byte("w"), []byte(`{"event":"e","match":[1]}`)
		rawWaitEvent(ptr(n), 1, ptr(o), uint32(len(o)))
	},
	"log-out-of-bounds":  func() { rawLog(0, 0xffff0000, 0xffff) },
	"complete-not-json":  func() { o := []byte("{"); rawComplete(ptr(o), 1) },
	"complete-twice":     func() { o := []byte("1"); rawComplete(ptr(o), 1); rawComplete(ptr(o), 1) },
	"step-after-finish":  func() { o := []byte("1"); rawComplete(ptr(o), 1); rawStepRun(ptr(o), 1, 0, 0) },
	"fail-out-of-bounds": func() { rawFail(0xfffffff0, 64) },
	"continue-not-json":  func() { o := []byte("{"); rawContinueAsNew(ptr(o), 1) },
	"continue-bad-input": func() { o := []byte(`{"input":"\ud800"}`); rawContinueAsNew(ptr(o), uint32(len(o))) },
	"continue-in-step": func() {
		n, o := []byte("s"), []byte(`{}`)
		rawStepRun(ptr(n), 1, 0, 0)
		rawContinueAsNew(ptr(o), uint32(len(o)))
	},
	"continue-out-of-bounds": func() { rawContinueAsNew(0xfffffff0, 64) },
	"continue-after-finish": func() {
		o := []byte("1")
		rawComplete(ptr(o), 1)
		rawContinueAsNew(ptr(o), 1)
	},
}

func init() {
	wf.Register(wf.Workflow[abuseInput, string]{Name: "abuse", Version: "1",
		Run: func(ctx *wf.Context, in abuseInput) (string, error) {
			f, ok := abuses[in.Case]
			if !ok {
				return "", wf.NewError("no_such_case", "no abuse case %q", in.Case)
			}
			f()
			return "the host let it pass", nil
		}})
}
