package wasmgen

import (
	"bytes"

	"github.com/wfhost/wfhost/abi"
)

// Hostile is one hostile module and what the host must make of it.
type Hostile struct {
	Name string
	Wasm []byte
	// Refused, when not "", is a fragment of the error Load must refuse the module with
	// (wrapping host.ErrInvalidModule; a deploy answers 4xx).
	Refused string
	// Code, for a module that loads, is the error code a run of its workflow "w" must fail
	// with.
	Code string
}

// Bombs are modules built to make the decoder or the compiler allocate or work without bound,
// or that break the spec where wazero does not look: the pre-check must refuse each, with the
// fault named, before wazero reads it.
func Bombs() []Hostile {
	w := Workflow{}
	withFunc := func(f Func) []byte { w := w; w.Extra = []Func{f}; return w.Encode() }
	nested := func(depth int) []byte {
		body := bytes.Repeat([]byte{OpBlock, BlockEmpty}, depth)
		return append(body, bytes.Repeat([]byte{OpEnd}, depth)...)
	}
	brTable := func(targets int) []byte {
		body := []byte{OpBlock, BlockEmpty}
		body = append(body, I32Const(0)...)
		body = append(body, OpBrTable)
		body = append(body, ULEB(uint64(targets))...)
		body = append(body, bytes.Repeat([]byte{0}, targets+1)...)
		return append(body, OpEnd)
	}
	return []Hostile{
		// The 229-byte module of the attack: one declaration of 2^32-1 locals made wazero's
		// decoder ask for 32 GiB.
		{Name: "locals-one-declaration", Wasm: withFunc(Func{Locals: []LocalGroup{{1<<32 - 1, I32}}}),
			Refused: "declares more than 50000 locals"},
		// Two declarations whose sum wraps a uint32 to 2.
		{Name: "locals-sum-wraps", Wasm: withFunc(Func{Locals: []LocalGroup{{1<<31 + 1, I32}, {1<<31 + 1, I64}}}),
			Refused: "declares more than 50000 locals"},
		{Name: "locals-many-groups", Wasm: withFunc(Func{Locals: bytesRepeatGroups(60_000)}),
			Refused: "60000 local declarations, the limit is 50000"},
		{Name: "deep-nesting", Wasm: withFunc(Func{Body: nested(20_000)}),
			Refused: "nests blocks deeper than 10000"},
		{Name: "huge-br-table", Wasm: withFunc(Func{Body: brTable(2_000_000)}),
			Refused: "2000000 br_table targets, the limit is 1000000"},
		{Name: "huge-function-body", Wasm: withFunc(Func{Body: bytes.Repeat([]byte{0x01}, 8_000_000)}),
			Refused: "the limit is 7654321"},
		{Name: "function-count-over-limit", Wasm: Binary(
			Section(1, Vec(1, []byte{0x60, 0, 0})),
			Section(3, append(ULEB(5_000_000), 0))),
			Refused: "5000000 functions, the limit is 200000"},
		{Name: "function-count-lies", Wasm: Binary(
			Section(1, Vec(1, []byte{0x60, 0, 0})),
			Section(3, append(ULEB(150_000), 0, 0, 0))),
			Refused: "150000 functions declared in 3 remaining bytes"},
		{Name: "section-length-lies", Wasm: Binary(append([]byte{1}, ULEB(1<<20)...), Vec(0, nil)),
			Refused: "section type declares 1048576 bytes"},
		{Name: "leb-too-long", Wasm: Binary([]byte{1, 0x8b, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}),
			Refused: "LEB128 too long"},
		{Name: "type-count-lies", Wasm: Binary(Section(1, ULEB(90_000))),
			Refused: "90000 types declared in 0 remaining bytes"},
		{Name: "huge-table", Wasm: Module{HasTable: true, TableMin: 4_000_000_000, Funcs: []Func{{}}}.Encode(),
			Refused: "a table of at least 4000000000 entries"},
		{Name: "huge-memory", Wasm: Workflow{MemoryMin: 70_000}.Encode(),
			Refused: "a memory of at least 70000 pages"},
		// Spec violations wazero accepts (finding 8 of the attack).
		{Name: "elem-segment-out-of-bounds", Wasm: Module{HasTable: true, TableMin: 1, Funcs: []Func{{}},
			Elems: []Segment{{Offset: 1, Funcs: []uint32{0, 0}}}}.Encode(),
			Refused: "entries 1 to 3 are outside table 0 of 1 entries"},
		{Name: "data-segment-out-of-bounds", Wasm: Module{HasMemory: true, MemoryMin: 1, Funcs: []Func{{}},
			Data: []Segment{{Offset: 65530, Bytes: make([]byte, 100)}}}.Encode(),
			Refused: "bytes 65530 to 65630 are outside the memory's 1 initial pages"},
		{Name: "unknown-opcode", Wasm: withFunc(Func{Body: []byte{0xff}}),
			Refused: "unknown or unsupported opcode 0xff"},
		{Name: "threads-opcode", Wasm: withFunc(Func{Body: []byte{0xfe, 0x03, 0x00}}),
			Refused: "atomic instruction atomic.fence (0xfe 0x3) (threads): not supported"},
		{Name: "unknown-section", Wasm: Binary(Section(42, nil)),
			Refused: "unknown section id 42"},
		{Name: "sections-out-of-order", Wasm: Binary(Section(3, Vec(0, nil)), Section(1, Vec(0, nil))),
			Refused: "type section out of order"},
		{Name: "body-without-end", Wasm: Binary(
			Section(1, Vec(1, []byte{0x60, 0, 0})),
			Section(3, Vec(1, []byte{0})),
			Section(10, Vec(1, Vec(2, []byte{0x00, 0x01})))),
			Refused: "code runs past its body without a final end"},
	}
}

func bytesRepeatGroups(n int) []LocalGroup {
	g := make([]LocalGroup, n)
	for i := range g {
		g[i] = LocalGroup{0, I32}
	}
	return g
}

// TrapsAndAbuse are modules of the right shape whose exports trap, spin, lie or abuse memory
// and the stack. Those whose fault shows while Load describes them are refused; the others
// load, and a run of workflow "w" fails with Code.
func TrapsAndAbuse() []Hostile {
	unreachable := []byte{OpUnreachable}
	spin := []byte{OpLoop, BlockEmpty, OpBr, 0, OpEnd}
	// memory.grow by one page until it fails, then trap.
	growLoop := []byte{OpLoop, BlockEmpty}
	growLoop = append(growLoop, I32Const(1)...)
	growLoop = append(growLoop, OpMemoryGrow, 0x00)
	growLoop = append(growLoop, I32Const(-1)...)
	growLoop = append(growLoop, 0x47, OpBrIf, 0, OpEnd, OpUnreachable) // i32.ne
	recurse := []byte{OpCall, ExtraIndex}
	oobComplete := append(I32Const(-256), I32Const(64)...)
	oobComplete = append(oobComplete, OpCall, completeIndex)
	return []Hostile{
		{Name: "trap-in-initialize", Wasm: Workflow{Initialize: unreachable}.Encode(), Refused: abi.ExportInitialize + " trapped"},
		{Name: "trap-in-abi-version", Wasm: Workflow{ABIVersion: unreachable}.Encode(), Refused: abi.ExportABIVersion + " trapped"},
		{Name: "trap-in-describe", Wasm: Workflow{Describe: unreachable}.Encode(), Refused: abi.ExportDescribe + " trapped"},
		{Name: "wrong-abi-version", Wasm: Workflow{ABIVersion: I32Const(7)}.Encode(), Refused: "module speaks ABI version 7"},
		{Name: "describe-outside-memory", Wasm: Workflow{Describe: I64Const(int64(abi.PackPtrLen(0xffff0000, 64)))}.Encode(),
			Refused: "outside the module's memory"},
		{Name: "spin-in-describe", Wasm: Workflow{Describe: append(spin, I64Const(0)...)}.Encode(),
			Refused: abi.ExportDescribe + " did not return within"},
		{Name: "trap-in-alloc", Wasm: Workflow{Alloc: unreachable}.Encode(), Code: abi.CodeTrap},
		{Name: "trap-in-run", Wasm: Workflow{Run: unreachable}.Encode(), Code: abi.CodeTrap},
		{Name: "alloc-outside-memory", Wasm: Workflow{Alloc: I32Const(-256)}.Encode(), Code: abi.CodeABIViolation},
		{Name: "complete-outside-memory", Wasm: Workflow{Run: oobComplete}.Encode(), Code: abi.CodeABIViolation},
		{Name: "run-without-result", Wasm: Workflow{Run: []byte{}}.Encode(), Code: abi.CodeNoResult},
		{Name: "memory-grow-loop", Wasm: Workflow{Run: growLoop}.Encode(), Code: abi.CodeTrap},
		{Name: "deep-recursion", Wasm: Workflow{Run: recurse, Extra: []Func{{Body: recurse}}}.Encode(), Code: abi.CodeTrap},
	}
}

// Spin is a module whose run never returns: its run fails with deadline_exceeded.
func Spin() []byte {
	return Workflow{Run: []byte{OpLoop, BlockEmpty, OpBr, 0, OpEnd}}.Encode()
}

// SlowCompile is a small, valid module whose compile takes time and memory growing much
// faster than its size: fanout nested blocks, each defining a local, left all at once by one
// br_table, and each local read after its block. wazero's SSA construction and register
// allocation are superlinear in it (measured here: fanout 1,000 compiled in 0.27 s, 4,000 (60
// KB) in 8.8 s). It passes the pre-check: only a bound on compile time stops it.
func SlowCompile(fanout int) []byte {
	var body []byte
	for i := 0; i < fanout; i++ {
		body = append(body, OpBlock, BlockEmpty)
		body = append(body, I32Const(int32(i))...)
		body = append(body, OpLocalSet)
		body = append(body, ULEB(uint64(i))...)
	}
	body = append(body, OpLocalGet, 0, OpBrTable)
	body = append(body, ULEB(uint64(fanout))...)
	for i := 0; i <= fanout; i++ {
		body = append(body, ULEB(uint64(i%fanout))...)
	}
	for i := 0; i < fanout; i++ {
		body = append(body, OpEnd, OpLocalGet)
		body = append(body, ULEB(uint64(i))...)
		body = append(body, OpDrop)
	}
	return Workflow{Extra: []Func{{Locals: []LocalGroup{{uint64(fanout), I32}}, Body: body}}}.Encode()
}
