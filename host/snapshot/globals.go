package snapshot

import (
	"errors"
	"fmt"
	"strconv"
)

// GlobalPrefix names the exports ExportGlobals adds. It differs from the host's own
// ("wfhost.global."), so a transformed module can still go through host.Runtime.Load, which
// adds its exports beside these.
const GlobalPrefix = "wfhost.snapshot.global."

// ExportGlobals returns a copy of wasm that also exports each of its own mutable globals as
// prefix+index, and those names in index order. wazero reaches a global only through an
// export, and a snapshot must hold every mutable global: the guest's stack pointer, its
// allocator's and runtime's state, and asyncify's own state and data pointer. (The host's pool
// resets instances through the same exports, under its own prefix: it calls this too.) A
// module it cannot rewrite (no export section, a mutable v128 global, which wazero cannot
// read whole, a construct this parser does not know) is an error.
func ExportGlobals(wasm []byte, prefix string) ([]byte, []string, error) {
	r := &reader{b: wasm}
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, nil, errors.New("export globals: not a wasm binary")
	}
	r.pos = 8
	var (
		importedGlobals int
		mutable         []int
		exportStart     = -1
		exportEnd       int
	)
	for r.pos < len(wasm) && r.err == nil {
		secPos := r.pos
		id := r.byte()
		size := int(r.uleb())
		start, end := r.pos, r.pos+size
		if r.err != nil || end > len(wasm) {
			return nil, nil, fmt.Errorf("export globals: section %d at %d runs past the end", id, secPos)
		}
		s := &reader{b: wasm[:end], pos: start}
		switch id {
		case 2: // imports
			n := int(s.uleb())
			for range n {
				s.name()
				s.name()
				kind := s.byte()
				switch kind {
				case 0x00: // function
					s.uleb()
				case 0x01: // table
					s.byte()
					s.limits()
				case 0x02: // memory
					s.limits()
				case 0x03: // global
					s.byte()
					s.byte()
					importedGlobals++
				case 0x04: // tag
					s.byte()
					s.uleb()
				default:
					return nil, nil, fmt.Errorf("export globals: import kind %#x", kind)
				}
			}
		case 6: // globals
			n := int(s.uleb())
			for i := range n {
				valtype, mut := s.byte(), s.byte()
				if valtype == 0x7b {
					return nil, nil, errors.New("export globals: a v128 global")
				}
				if mut == 1 {
					mutable = append(mutable, importedGlobals+i)
				}
				s.constExpr()
			}
		case 7:
			exportStart, exportEnd = secPos, end
		}
		if s.err != nil {
			return nil, nil, fmt.Errorf("export globals: section %d: %w", id, s.err)
		}
		r.pos = end
	}
	if r.err != nil {
		return nil, nil, fmt.Errorf("export globals: %w", r.err)
	}
	if exportStart < 0 {
		return nil, nil, errors.New("export globals: no export section")
	}
	h := &reader{b: wasm, pos: exportStart + 1}
	h.uleb() // section size
	oldCount := h.uleb()
	entries := wasm[h.pos:exportEnd]
	var added []byte
	names := make([]string, 0, len(mutable))
	for _, idx := range mutable {
		name := prefix + strconv.Itoa(idx)
		names = append(names, name)
		added = appendULEB(added, uint64(len(name)))
		added = append(added, name...)
		added = append(added, 0x03)
		added = appendULEB(added, uint64(idx))
	}
	section := appendULEB(nil, oldCount+uint64(len(names)))
	section = append(section, entries...)
	section = append(section, added...)
	out := make([]byte, 0, len(wasm)+len(added)+8)
	out = append(out, wasm[:exportStart]...)
	out = append(out, 7)
	out = appendULEB(out, uint64(len(section)))
	out = append(out, section...)
	out = append(out, wasm[exportEnd:]...)
	return out, names, nil
}

// reader reads the parts of a wasm binary ExportGlobals needs; the first fault sticks.
type reader struct {
	b   []byte
	pos int
	err error
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.pos >= len(r.b) {
		r.err = errors.New("unexpected end")
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

// uleb reads an unsigned LEB128 (a signed one has the same length, which is all constExpr
// needs of it).
func (r *reader) uleb() uint64 {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.err = errors.New("LEB128 too long")
	return 0
}

func (r *reader) name() {
	n := int(r.uleb())
	if r.err == nil && r.pos+n > len(r.b) {
		r.err = errors.New("name past the end")
		return
	}
	r.pos += n
}

func (r *reader) limits() {
	flags := r.byte()
	r.uleb()
	if flags&1 != 0 {
		r.uleb()
	}
}

// constExpr skips a global's initialiser, up to its end opcode.
func (r *reader) constExpr() {
	for r.err == nil {
		switch op := r.byte(); op {
		case 0x0b:
			return
		case 0x41, 0x42, 0x23, 0xd2:
			r.uleb()
		case 0x43:
			r.pos += 4
		case 0x44:
			r.pos += 8
		case 0xd0:
			r.byte()
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e:
		default:
			r.err = fmt.Errorf("opcode %#x in a constant expression", op)
		}
	}
}

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}
