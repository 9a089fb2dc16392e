//go:build wasm && !extism

package wf

// The guest exports of abi/ABI.md §3, for the native transport.

//go:wasmexport wfhost_abi_version
func exportABIVersion() int32 { return abiVersion }

// allocations keeps the buffers handed to the host alive until the run that reads them ends:
// the host writes into them after alloc returns, so nothing in Go may hold the only reference.
var allocations = map[uint32][]byte{}

//go:wasmexport wfhost_alloc
func exportAlloc(size uint32) uint32 {
	b := make([]byte, size, size+1) // never empty, so every allocation has its own address
	p := addr(b[:cap(b)])
	allocations[p] = b
	return p
}

// describeBuf keeps the description alive while the host reads it.
var describeBuf []byte

//go:wasmexport wfhost_describe
func exportDescribe() uint64 {
	describeBuf = describeJSON()
	return uint64(addr(describeBuf))<<32 | uint64(len(describeBuf))
}

//go:wasmexport wfhost_run
func exportRun(namePtr, nameLen, inputPtr, inputLen uint32) {
	name := string(allocations[namePtr][:nameLen])
	input := allocations[inputPtr][:inputLen]
	clear(allocations)
	runWorkflow(name, input)
}
