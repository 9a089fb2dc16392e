package wasmgen

import (
	"fmt"

	"github.com/wfhost/wfhost/abi"
)

// Where Workflow's module keeps its data in its memory.
const (
	descAt   = 1024
	outputAt = 2048
	allocAt  = 4096
)

// Workflow is a minimal module of the native ABI (abi/ABI.md §1-3): one workflow, Name, whose
// run completes with Output. Each export's body can be replaced (without its final end) to
// make it trap, spin or lie; a nil body is the working default.
type Workflow struct {
	Name      string // default "w"
	Output    string // JSON; default {"ok":true}
	MemoryMin uint64 // pages; default 1

	Initialize []byte // _initialize, exported only when set
	ABIVersion []byte // () -> i32
	Describe   []byte // () -> i64
	Alloc      []byte // (i32) -> i32
	Run        []byte // (i32, i32, i32, i32) -> ()
	// Extra functions follow, numbered from ExtraIndex.
	Extra []Func
}

// Function indexes in Workflow's module: the complete import is 0.
const (
	completeIndex = 0
	// ExtraIndex is the index of Workflow.Extra[0].
	ExtraIndex = 6
)

// Description is the JSON wfhost_describe returns by default.
func (w Workflow) Description() string {
	return fmt.Sprintf(`{"workflows":[{"name":%q,"version":"1"}]}`, w.name())
}

func (w Workflow) name() string {
	if w.Name == "" {
		return "w"
	}
	return w.Name
}

func (w Workflow) output() string {
	if w.Output == "" {
		return `{"ok":true}`
	}
	return w.Output
}

// CompleteBody calls complete with the default output: the default run.
func (w Workflow) CompleteBody() []byte {
	body := I32Const(outputAt)
	body = append(body, I32Const(int32(len(w.output())))...)
	return append(body, OpCall, completeIndex)
}

// Encode writes the module.
func (w Workflow) Encode() []byte {
	or := func(b, def []byte) []byte {
		if b == nil {
			return def
		}
		return b
	}
	desc := w.Description()
	i32 := []byte{I32}
	funcs := []Func{
		{Type: FuncType{nil, i32}, Body: or(w.ABIVersion, I32Const(abi.Version)), Export: abi.ExportABIVersion},
		{Type: FuncType{nil, []byte{I64}}, Body: or(w.Describe, I64Const(int64(abi.PackPtrLen(descAt, uint32(len(desc)))))), Export: abi.ExportDescribe},
		{Type: FuncType{i32, i32}, Body: or(w.Alloc, I32Const(allocAt)), Export: abi.ExportAlloc},
		{Type: FuncType{[]byte{I32, I32, I32, I32}, nil}, Body: or(w.Run, w.CompleteBody()), Export: abi.ExportRun},
		// _initialize is index 5 whether exported or not, so Extra keeps its indexes.
		{Type: FuncType{}, Body: or(w.Initialize, nil)},
	}
	if w.Initialize != nil {
		funcs[4].Export = abi.ExportInitialize
	}
	funcs = append(funcs, w.Extra...)
	mem := w.MemoryMin
	if mem == 0 {
		mem = 1
	}
	return Module{
		Imports:   []Import{{abi.ImportModule, abi.FuncComplete, FuncType{[]byte{I32, I32}, nil}}},
		Funcs:     funcs,
		HasMemory: true,
		MemoryMin: mem,
		Data: []Segment{
			{Offset: descAt, Bytes: []byte(desc)},
			{Offset: outputAt, Bytes: []byte(w.output())},
		},
	}.Encode()
}
