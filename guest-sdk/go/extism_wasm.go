//go:build wasm && extism

package wf

import "github.com/extism/go-pdk"

// The Extism transport (abi/ABI.md §9): built with -tags extism, a module becomes an Extism
// plug-in on Extism's Go PDK. The same workflow code and the same calls as the native transport
// (native_wasm.go); only how bytes travel differs: each argument is an Extism memory block, and
// a reply's data comes back in a block the guest reads and frees (there is no take).

//go:wasmimport extism:host/user step_run
func hostStepRun(name, opts uint64) uint64

//go:wasmimport extism:host/user step_done
func hostStepDone(outcome uint32, data uint64) uint64

//go:wasmimport extism:host/user sleep
func hostSleep(name uint64, durationMs int64) uint64

//go:wasmimport extism:host/user sleep_until
func hostSleepUntil(name uint64, unixMs int64) uint64

//go:wasmimport extism:host/user wait_event
func hostWaitEvent(name, opts uint64) uint64

//go:wasmimport extism:host/user log
func hostLog(level uint32, msg uint64)

//go:wasmimport extism:host/user complete
func hostComplete(output uint64)

//go:wasmimport extism:host/user fail
func hostFail(info uint64)

//go:wasmimport extism:host/user http_request
func hostHTTPRequest(req uint64) uint64

//go:wasmimport extism:host/user secret_get
func hostSecretGet(name uint64) uint64

//go:wasmimport extism:host/user event_send
func hostEventSend(req uint64) uint64

//go:wasmimport extism:host/user child_run
func hostChildRun(name, req uint64) uint64

//go:wasmimport extism:host/user continue_as_new
func hostContinueAsNew(req uint64)

//go:wasmimport extism:host/user query_respond
func hostQueryRespond(outcome uint32, data uint64)

//go:wasmimport extism:host/user parallel_run
func hostParallelRun(name, req uint64) uint64

//go:wasmimport extism:host/user branch_done
func hostBranchDone(outcome uint32, data uint64)

// block copies b into a new Extism memory block; offset 0 stands for no data.
func block(b []byte) pdk.Memory {
	if len(b) == 0 {
		return pdk.Memory{}
	}
	return pdk.AllocateBytes(b)
}

// reply splits a reply into its status and its data block, which it reads and frees.
func reply(r uint64) (status int32, data []byte) {
	status = int32(uint32(r))
	if offset := r >> 32; offset != 0 {
		m := pdk.FindMemory(offset)
		data = m.ReadBytes()
		m.Free()
	}
	return status, data
}

func callStepRun(name, opts []byte) (int32, []byte) {
	n, o := block(name), block(opts)
	defer n.Free()
	defer o.Free()
	return reply(hostStepRun(n.Offset(), o.Offset()))
}

func callStepDone(outcome uint32, data []byte) (int32, []byte) {
	d := block(data)
	defer d.Free()
	return reply(hostStepDone(outcome, d.Offset()))
}

func callSleep(name []byte, ms int64) (int32, []byte) {
	n := block(name)
	defer n.Free()
	return reply(hostSleep(n.Offset(), ms))
}

func callSleepUntil(name []byte, unixMs int64) (int32, []byte) {
	n := block(name)
	defer n.Free()
	return reply(hostSleepUntil(n.Offset(), unixMs))
}

func callWaitEvent(name, opts []byte) (int32, []byte) {
	n, o := block(name), block(opts)
	defer n.Free()
	defer o.Free()
	return reply(hostWaitEvent(n.Offset(), o.Offset()))
}

func callLog(level uint32, msg []byte) {
	m := block(msg)
	defer m.Free()
	hostLog(level, m.Offset())
}

func callComplete(out []byte) {
	o := block(out)
	defer o.Free()
	hostComplete(o.Offset())
}

func callFail(info []byte) {
	i := block(info)
	defer i.Free()
	hostFail(i.Offset())
}

func callHTTPRequest(req []byte) (int32, []byte) {
	r := block(req)
	defer r.Free()
	return reply(hostHTTPRequest(r.Offset()))
}

func callSecretGet(name []byte) (int32, []byte) {
	n := block(name)
	defer n.Free()
	return reply(hostSecretGet(n.Offset()))
}

func callEventSend(req []byte) (int32, []byte) {
	r := block(req)
	defer r.Free()
	return reply(hostEventSend(r.Offset()))
}

// The plug-in functions of abi/ABI.md §9, each () -> i32.

//go:wasmexport wfhost_abi_version
func exportABIVersion() int32 { return abiVersion }

//go:wasmexport wfhost_describe
func exportDescribe() int32 {
	pdk.Output(describeJSON())
	return 0
}

//go:wasmexport wfhost_run
func exportRun() int32 {
	name, _ := pdk.GetConfig("wfhost.workflow")
	runWorkflow(name, pdk.Input())
	return 0
}

func callContinueAsNew(req []byte) {
	r := block(req)
	defer r.Free()
	hostContinueAsNew(r.Offset())
}

func callChildRun(name, req []byte) (int32, []byte) {
	n, r := block(name), block(req)
	defer n.Free()
	defer r.Free()
	return reply(hostChildRun(n.Offset(), r.Offset()))
}

func callQueryRespond(outcome uint32, data []byte) {
	d := block(data)
	defer d.Free()
	hostQueryRespond(outcome, d.Offset())
}

func callParallelRun(name, req []byte) (int32, []byte) {
	n, r := block(name), block(req)
	defer n.Free()
	defer r.Free()
	return reply(hostParallelRun(n.Offset(), r.Offset()))
}

func callBranchDone(outcome uint32, data []byte) {
	d := block(data)
	defer d.Free()
	hostBranchDone(outcome, d.Offset())
}
