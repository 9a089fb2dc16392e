package wasmgen

import "encoding/binary"

// Value types and other single-byte codes of the binary format.
const (
	I32     byte = 0x7f
	I64     byte = 0x7e
	FuncRef byte = 0x70
)

// Opcodes the generators use.
const (
	OpUnreachable byte = 0x00
	OpBlock       byte = 0x02
	OpLoop        byte = 0x03
	OpEnd         byte = 0x0b
	OpBr          byte = 0x0c
	OpBrIf        byte = 0x0d
	OpBrTable     byte = 0x0e
	OpCall        byte = 0x10
	OpDrop        byte = 0x1a
	OpLocalGet    byte = 0x20
	OpLocalSet    byte = 0x21
	OpI32Const    byte = 0x41
	OpI64Const    byte = 0x42
	OpI32Eqz      byte = 0x45
	OpI32Add      byte = 0x6a
	OpI32Mul      byte = 0x6c
	OpI32Xor      byte = 0x73
	OpMemoryGrow  byte = 0x40
	BlockEmpty    byte = 0x40
)

// ULEB is v as unsigned LEB128.
func ULEB(v uint64) []byte { return binary.AppendUvarint(nil, v) }

// SLEB is v as signed LEB128.
func SLEB(v int64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v == 0 && b&0x40 == 0 || v == -1 && b&0x40 != 0 {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

// Vec is a vector: its length, then its bytes.
func Vec(n int, items []byte) []byte { return append(ULEB(uint64(n)), items...) }

// Name is a name: its length, then its bytes.
func Name(s string) []byte { return Vec(len(s), []byte(s)) }

// Section is one section: its id, its size and its body.
func Section(id byte, body []byte) []byte {
	return append(append([]byte{id}, ULEB(uint64(len(body)))...), body...)
}

// Header is the preamble of every module.
var Header = []byte("\x00asm\x01\x00\x00\x00")

// Binary joins the header and sections.
func Binary(sections ...[]byte) []byte {
	out := append([]byte(nil), Header...)
	for _, s := range sections {
		out = append(out, s...)
	}
	return out
}

// I32Const is i32.const v.
func I32Const(v int32) []byte { return append([]byte{OpI32Const}, SLEB(int64(v))...) }

// I64Const is i64.const v.
func I64Const(v int64) []byte { return append([]byte{OpI64Const}, SLEB(v)...) }

// FuncType is a function signature.
type FuncType struct{ Params, Results []byte }

// Import is an imported function.
type Import struct {
	Module, Name string
	Type         FuncType
}

// Func is a defined function. Body is its code without the final end; Locals its local
// declarations as (count, type) groups.
type Func struct {
	Type   FuncType
	Locals []LocalGroup
	Body   []byte
	Export string
}

// LocalGroup declares Count locals of one type.
type LocalGroup struct {
	Count uint64
	Type  byte
}

// Segment is an active element segment (function indexes) or data segment (bytes) at a
// constant offset.
type Segment struct {
	Offset int32
	Funcs  []uint32
	Bytes  []byte
}

// Module is a module to encode. Functions are numbered imports first.
type Module struct {
	Imports []Import
	Funcs   []Func
	// TableMin, when HasTable, declares a funcref table of that minimum size.
	HasTable bool
	TableMin uint64
	// MemoryMin, when HasMemory, declares a memory of that many pages, exported as "memory".
	HasMemory bool
	MemoryMin uint64
	Elems     []Segment
	Data      []Segment
}

// Encode writes the module's binary.
func (m Module) Encode() []byte {
	var types [][]byte
	typeIndex := func(t FuncType) uint64 {
		enc := append([]byte{0x60}, Vec(len(t.Params), t.Params)...)
		enc = append(enc, Vec(len(t.Results), t.Results)...)
		for i, have := range types {
			if string(have) == string(enc) {
				return uint64(i)
			}
		}
		types = append(types, enc)
		return uint64(len(types) - 1)
	}
	var imports, funcs, exports, code []byte
	nExports := 0
	for _, im := range m.Imports {
		imports = append(imports, Name(im.Module)...)
		imports = append(imports, Name(im.Name)...)
		imports = append(imports, 0x00)
		imports = append(imports, ULEB(typeIndex(im.Type))...)
	}
	for i, f := range m.Funcs {
		funcs = append(funcs, ULEB(typeIndex(f.Type))...)
		if f.Export != "" {
			exports = append(exports, Name(f.Export)...)
			exports = append(exports, 0x00)
			exports = append(exports, ULEB(uint64(len(m.Imports)+i))...)
			nExports++
		}
		var body []byte
		body = append(body, ULEB(uint64(len(f.Locals)))...)
		for _, g := range f.Locals {
			body = append(body, ULEB(g.Count)...)
			body = append(body, g.Type)
		}
		body = append(body, f.Body...)
		body = append(body, OpEnd)
		code = append(code, ULEB(uint64(len(body)))...)
		code = append(code, body...)
	}
	if m.HasMemory {
		exports = append(exports, Name("memory")...)
		exports = append(exports, 0x02, 0x00)
		nExports++
	}
	var typeSec []byte
	for _, t := range types {
		typeSec = append(typeSec, t...)
	}
	out := append([]byte(nil), Header...)
	out = append(out, Section(1, Vec(len(types), typeSec))...)
	if len(m.Imports) > 0 {
		out = append(out, Section(2, Vec(len(m.Imports), imports))...)
	}
	out = append(out, Section(3, Vec(len(m.Funcs), funcs))...)
	if m.HasTable {
		out = append(out, Section(4, Vec(1, append([]byte{FuncRef, 0x00}, ULEB(m.TableMin)...)))...)
	}
	if m.HasMemory {
		out = append(out, Section(5, Vec(1, append([]byte{0x00}, ULEB(m.MemoryMin)...)))...)
	}
	out = append(out, Section(7, Vec(nExports, exports))...)
	if len(m.Elems) > 0 {
		var elems []byte
		for _, e := range m.Elems {
			elems = append(elems, 0x00)
			elems = append(elems, I32Const(e.Offset)...)
			elems = append(elems, OpEnd)
			elems = append(elems, ULEB(uint64(len(e.Funcs)))...)
			for _, f := range e.Funcs {
				elems = append(elems, ULEB(uint64(f))...)
			}
		}
		out = append(out, Section(9, Vec(len(m.Elems), elems))...)
	}
	out = append(out, Section(10, Vec(len(m.Funcs), code))...)
	if len(m.Data) > 0 {
		var data []byte
		for _, d := range m.Data {
			data = append(data, 0x00)
			data = append(data, I32Const(d.Offset)...)
			data = append(data, OpEnd)
			data = append(data, Vec(len(d.Bytes), d.Bytes)...)
		}
		out = append(out, Section(11, Vec(len(m.Data), data))...)
	}
	return out
}
