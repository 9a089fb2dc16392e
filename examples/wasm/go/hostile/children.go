package main

import (
	"encoding/json"
	"strings"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

// child_run misused (abi/ABI.md §4.16), raw: the host must trap, fail the run with a clear code,
// or answer the step's error, as the ABI says.

//go:wasmimport wfhost child_run
func rawChildRun(namePtr, nameLen, reqPtr, reqLen uint32) uint64

func init() {
	abuses["child-not-json"] = func() { n, r := []byte("c"), []byte("{"); rawChildRun(ptr(n), 1, ptr(r), 1) }
	abuses["child-empty-workflow"] = func() { childRaw("c", `{"workflow":""}`) }
	abuses["child-workflow-slash"] = func() { childRaw("c", `{"workflow":"a/b"}`) }
	abuses["child-version-nul"] = func() { childRaw("c", `{"workflow":"w","version":"v\u0000"}`) }
	abuses["child-bad-id"] = func() { childRaw("c", `{"workflow":"w","id":"x#1"}`) }
	abuses["child-negative-timeout"] = func() { childRaw("c", `{"workflow":"w","timeoutMs":-1}`) }
	abuses["child-bad-parent-close"] = func() { childRaw("c", `{"workflow":"w","parentClose":"orphan"}`) }
	abuses["child-invalid-utf8"] = func() {
		n, r := []byte("c"), []byte("{\"workflow\":\"\xff\xfe\"}")
		rawChildRun(ptr(n), 1, ptr(r), uint32(len(r)))
	}
	abuses["child-empty-name"] = func() { r := []byte(`{"workflow":"w"}`); rawChildRun(0, 0, ptr(r), uint32(len(r))) }
	abuses["child-out-of-bounds"] = func() { n := []byte("c"); rawChildRun(ptr(n), 1, 0xfffffff0, 64) }
	abuses["child-in-step"] = func() {
		n := []byte("s")
		rawStepRun(ptr(n), 1, 0, 0)
		childRaw("c", `{"workflow":"w"}`)
	}
	abuses["child-bad-input"] = func() { childRaw("c", `{"workflow":"w","input":"\ud800"}`) }
	abuses["child-huge"] = func() { n := []byte("c"); rawChildRun(ptr(n), 1, ptr(n), 0xffffffff) }

	wf.Register(wf.Workflow[childAbuse, childAnswer]{Name: "child-abuse", Version: "1",
		Run: func(ctx *wf.Context, in childAbuse) (childAnswer, error) {
			if in.Pad > 0 {
				var m map[string]any
				if err := json.Unmarshal(in.Req, &m); err != nil {
					return childAnswer{}, err
				}
				m["input"] = strings.Repeat("x", in.Pad)
				in.Req, _ = json.Marshal(m)
			}
			status, data := childRaw(in.Name, string(in.Req))
			return childAnswer{Status: status, Data: json.RawMessage(data)}, nil
		}})
}

// childAbuse is a child_run request to make as given, under the step name Name; with Pad,
// its input is a string of that many bytes, larger than the parent's own input may be.
type childAbuse struct {
	Name string          `json:"name"`
	Req  json.RawMessage `json:"req"`
	Pad  int             `json:"pad"`
}

// childAnswer is the host's reply: its status and its data (JSON, or null).
type childAnswer struct {
	Status int32           `json:"status"`
	Data   json.RawMessage `json:"data"`
}

// childRaw calls child_run with name and req and collects the reply.
func childRaw(name, req string) (int32, []byte) {
	n, r := []byte(name), []byte(req)
	reply := rawChildRun(ptr(n), uint32(len(n)), ptr(r), uint32(len(r)))
	status, size := int32(uint32(reply)), uint32(reply>>32)
	data := []byte("null")
	if size > 0 {
		data = make([]byte, size)
		rawTake(ptr(data), size)
	}
	return status, data
}
