package abi

import (
	"strconv"
	"strings"
)

// The contract's names and signatures as data: every host function (HostFuncs) and every guest
// export (GuestExports, ExtismExports) once, with abi's own value types, so that the host's two
// transports, its load checks and ABI.md's test all read the same rows. A new host function is
// a name and a row here; the native signature (ABI.md §4) and the Extism one (§9) follow from it.

// Host functions, imported by the guest from ImportModule. Their signatures are HostFuncs'
// rows below; the normative description of each is in ABI.md §4.
const (
	FuncStepRun    = "step_run"
	FuncStepDone   = "step_done"
	FuncSleep      = "sleep"
	FuncSleepUntil = "sleep_until"
	FuncWaitEvent  = "wait_event"
	// FuncTake copies the pending reply data into guest memory (native modules only).
	FuncTake     = "take"
	FuncLog      = "log"
	FuncComplete = "complete"
	FuncFail     = "fail"
	// FuncHTTPRequest is an outbound HTTP request (an HTTPRequest JSON), allowed only inside
	// a step callback; StatusOK with an HTTPResponse JSON, or StatusError with an ErrorInfo
	// JSON saying why not.
	FuncHTTPRequest = "http_request"
	// FuncSecretGet is a tenant secret's value, only inside a step callback; StatusOK with the
	// value's bytes, or StatusError.
	FuncSecretGet = "secret_get"
	// FuncEventSend sends an event (an EventSend JSON) to one run of the tenant or to the
	// whole tenant, only inside a step callback; StatusOK with an EventSent JSON, or
	// StatusError saying why not.
	FuncEventSend = "event_send"
	// FuncContinueAsNew ends the run and starts a fresh run of the same workflow with a new
	// input and an empty journal (a ContinueAsNew JSON), outside step callbacks; it never
	// returns to the guest.
	FuncContinueAsNew = "continue_as_new"
	// FuncChildRun starts a child workflow run (a ChildRun JSON) as a durable step, outside
	// step callbacks: awaited, it answers the child's output or StatusStepFailed; detached, a
	// ChildStarted JSON.
	FuncChildRun = "child_run"
	// FuncQueryRespond answers the query a StatusQuery reply asked (a result JSON, or an
	// ErrorInfo JSON, by its outcome); it never returns to the guest (ABI.md §4.17).
	FuncQueryRespond = "query_respond"
	// FuncParallelRun fans out branches (a Parallel JSON) that run concurrently as runs of
	// their own and joins them, as a durable step, outside step callbacks: StatusOK with a
	// ParallelResult JSON, StatusStepFailed, or, in a branch's own pass at the call that
	// forked it, StatusBranch (ABI.md §4.18).
	FuncParallelRun = "parallel_run"
	// FuncBranchDone ends a branch's pass with the branch's output or error (by its outcome);
	// it never returns to the guest (ABI.md §4.18).
	FuncBranchDone = "branch_done"
)

// Guest exports. Their signatures are GuestExports' and ExtismExports' rows below.
const (
	// ExportMemory is the guest's linear memory.
	ExportMemory = "memory"
	// ExportABIVersion returns the ABI version the guest speaks.
	ExportABIVersion = "wfhost_abi_version"
	// ExportAlloc returns a buffer of at least size bytes that stays valid until the next
	// ExportRun call returns.
	ExportAlloc = "wfhost_alloc"
	// ExportDescribe returns a packed (ptr<<32 | len) of the Description JSON.
	ExportDescribe = "wfhost_describe"
	// ExportRun runs one workflow pass.
	ExportRun = "wfhost_run"
	// ExportInitialize is the WASI reactor initialiser; run once per instance if present.
	ExportInitialize = "_initialize"
)

// ValueType is a WebAssembly value type of a signature, numbered as in the binary format.
type ValueType byte

// The value types the contract uses.
const (
	I32 ValueType = 0x7f
	I64 ValueType = 0x7e
)

// String names the type as ABI.md writes it.
func (t ValueType) String() string {
	switch t {
	case I32:
		return "i32"
	case I64:
		return "i64"
	}
	return "type(0x" + strconv.FormatUint(uint64(t), 16) + ")"
}

// ParamKind says how an argument travels.
type ParamKind byte

const (
	// Data is a byte span: natively a pair of i32s, NAME_ptr and NAME_len, in the guest's
	// memory; for an Extism module one i64, the offset of a block in Extism's kernel memory.
	Data ParamKind = iota + 1
	// Scalar is one value of the Param's Type, the same in both transports.
	Scalar
)

// Param is one argument of a host function or a guest export.
type Param struct {
	Name string
	Kind ParamKind
	Type ValueType // a Scalar's type; a Data span's is fixed by the transport
}

func data(name string) Param                { return Param{Name: name, Kind: Data} }
func scalar(name string, t ValueType) Param { return Param{Name: name, Kind: Scalar, Type: t} }
func results(ts ...ValueType) []ValueType   { return ts }
func params(ps ...Param) []Param            { return ps }
func export(name string, ps []Param, rs []ValueType) Export {
	return Export{Name: name, Params: ps, Results: rs}
}

// MaxParams bounds the arguments of a host function, in Params (a Data span counts once).
const MaxParams = 4

// HostFunc is one host function of ImportModule (ABI.md §4).
type HostFunc struct {
	Name   string
	Params []Param
	// Reply says the function returns an i64 reply (§4.1): the status and, natively, the
	// pending data's length, or, under Extism, the reply block's offset. Otherwise it returns
	// nothing.
	Reply bool
	// NativeOnly keeps the function from Extism modules: take, whose work a reply block does.
	NativeOnly bool
}

// HostFuncs are the host functions, in ABI.md's order. Read-only.
var HostFuncs = []HostFunc{
	{Name: FuncStepRun, Params: params(data("name"), data("opts")), Reply: true},
	{Name: FuncStepDone, Params: params(scalar("outcome", I32), data("data")), Reply: true},
	{Name: FuncSleep, Params: params(data("name"), scalar("duration_ms", I64)), Reply: true},
	{Name: FuncSleepUntil, Params: params(data("name"), scalar("unix_ms", I64)), Reply: true},
	{Name: FuncWaitEvent, Params: params(data("name"), data("opts")), Reply: true},
	{Name: FuncTake, Params: params(data("buf")), NativeOnly: true},
	{Name: FuncLog, Params: params(scalar("level", I32), data("msg"))},
	{Name: FuncComplete, Params: params(data("data"))},
	{Name: FuncFail, Params: params(data("data"))},
	{Name: FuncHTTPRequest, Params: params(data("req")), Reply: true},
	{Name: FuncSecretGet, Params: params(data("name")), Reply: true},
	{Name: FuncEventSend, Params: params(data("req")), Reply: true},
	{Name: FuncContinueAsNew, Params: params(data("req"))},
	{Name: FuncChildRun, Params: params(data("name"), data("req")), Reply: true},
	{Name: FuncQueryRespond, Params: params(scalar("outcome", I32), data("data"))},
	{Name: FuncParallelRun, Params: params(data("name"), data("req")), Reply: true},
	{Name: FuncBranchDone, Params: params(scalar("outcome", I32), data("data"))},
}

// Native is the function's signature in ImportModule: each Data span a (ptr, len) pair of i32s.
func (f HostFunc) Native() Signature {
	return Signature{Params: nativeValues(f.Params), Results: f.results()}
}

// Extism is the function's signature for an Extism module (ABI.md §9): each Data span the i64
// offset of a kernel block.
func (f HostFunc) Extism() Signature {
	var vs []Value
	for _, p := range f.Params {
		if p.Kind == Data {
			vs = append(vs, Value{p.Name, I64})
		} else {
			vs = append(vs, Value{p.Name, p.Type})
		}
	}
	return Signature{Params: vs, Results: f.results()}
}

func (f HostFunc) results() []ValueType {
	if f.Reply {
		return []ValueType{I64}
	}
	return nil
}

// Export is a function a module exports for the host to call.
type Export struct {
	Name    string
	Params  []Param
	Results []ValueType
	// Optional exports are called when present and checked only then.
	Optional bool
}

// Signature is the export's signature, Data spans as (ptr, len) pairs of i32s.
func (e Export) Signature() Signature {
	return Signature{Params: nativeValues(e.Params), Results: e.Results}
}

// GuestExports are the functions a native module exports (ABI.md §3), besides its memory
// (ExportMemory). Read-only.
var GuestExports = []Export{
	export(ExportABIVersion, nil, results(I32)),
	export(ExportAlloc, params(scalar("size", I32)), results(I32)),
	export(ExportDescribe, nil, results(I64)),
	export(ExportRun, params(data("name"), data("input")), nil),
	{Name: ExportInitialize, Optional: true},
}

// ExtismExports are the functions an Extism module exports (ABI.md §9): Extism plug-in
// functions, taking nothing and returning an i32, their data in Extism's input and output.
// Read-only.
var ExtismExports = []Export{
	export(ExportABIVersion, nil, results(I32)),
	export(ExportDescribe, nil, results(I32)),
	export(ExportRun, nil, results(I32)),
	{Name: ExportInitialize, Optional: true},
}

func nativeValues(ps []Param) []Value {
	var vs []Value
	for _, p := range ps {
		if p.Kind == Data {
			vs = append(vs, Value{p.Name + "_ptr", I32}, Value{p.Name + "_len", I32})
		} else {
			vs = append(vs, Value{p.Name, p.Type})
		}
	}
	return vs
}

// Value is a named parameter of a Signature.
type Value struct {
	Name string
	Type ValueType
}

// Signature is a function's wasm type, with its parameters named as ABI.md names them.
type Signature struct {
	Params  []Value
	Results []ValueType
}

// ParamTypes are the parameters' types, in order.
func (s Signature) ParamTypes() []ValueType {
	ts := make([]ValueType, len(s.Params))
	for i, p := range s.Params {
		ts[i] = p.Type
	}
	return ts
}

// String writes s as ABI.md does: "(name_ptr, name_len i32, duration_ms i64) -> i64", a run
// of parameters of one type sharing it, and "()" for no results.
func (s Signature) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, p := range s.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name)
		if i == len(s.Params)-1 || s.Params[i+1].Type != p.Type {
			b.WriteString(" " + p.Type.String())
		}
	}
	b.WriteString(") -> ")
	switch len(s.Results) {
	case 0:
		b.WriteString("()")
	case 1:
		b.WriteString(s.Results[0].String())
	default:
		b.WriteByte('(')
		for i, t := range s.Results {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(t.String())
		}
		b.WriteByte(')')
	}
	return b.String()
}
