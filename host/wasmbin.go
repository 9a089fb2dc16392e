package host

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The little of the wasm binary format the host reads and rewrites before compiling a module:
// exportGlobals (globals.go), isExtismModule (extism.go) and redirectExtismHTTP
// (extism_http.go). wazero parses modules fully; these only find sections and import entries.

// section is one section of a wasm binary: its id, and the offsets of its id byte (pos), its
// body (start) and its end.
type section struct {
	id              byte
	pos, start, end int
}

// sections splits a wasm binary, after its 8-byte preamble, into its sections.
func sections(wasm []byte) ([]section, error) {
	if len(wasm) < 8 {
		return nil, errors.New("too short")
	}
	var out []section
	for pos := 8; pos < len(wasm); {
		size, n, err := uleb(wasm, pos+1)
		if err != nil {
			return nil, err
		}
		start := pos + 1 + n
		end := start + int(size)
		if end > len(wasm) || end < start {
			return nil, errors.New("section runs past the end")
		}
		out = append(out, section{id: wasm[pos], pos: pos, start: start, end: end})
		pos = end
	}
	return out, nil
}

// sectionImport is the id of the import section.
const sectionImport = 2

// importEntry is one import of an import section, with offsets into the section's body: the
// entry's start (from), the end of its module name (modEnd) and its end.
type importEntry struct {
	module, name      string
	kind              byte // 0 function, 1 table, 2 memory, 3 global, 4 tag
	from, modEnd, end int
}

// importEntries parses an import section's body; countEnd is where the entries begin.
func importEntries(body []byte) (entries []importEntry, countEnd int, err error) {
	r := reader{b: body}
	count := r.uleb()
	countEnd = r.pos
	for range count {
		e := importEntry{from: r.pos}
		e.module = r.str()
		e.modEnd = r.pos
		e.name = r.str()
		switch e.kind = r.byte(); e.kind {
		case 0x00: // function: type index
			r.uleb()
		case 0x01: // table: reftype, limits
			r.byte()
			r.limits()
		case 0x02: // memory: limits
			r.limits()
		case 0x03: // global: valtype, mutability
			r.byte()
			r.byte()
		case 0x04: // tag: attribute, type index
			r.byte()
			r.uleb()
		default:
			if r.err == nil {
				return nil, 0, fmt.Errorf("unknown import kind %#x", e.kind)
			}
		}
		if r.err != nil {
			return nil, 0, r.err
		}
		e.end = r.pos
		entries = append(entries, e)
	}
	if r.pos != len(body) {
		return nil, 0, errors.New("bytes after the last import")
	}
	return entries, countEnd, nil
}

// reader decodes the parts of a wasm binary the host reads; the first error sticks.
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

func (r *reader) uleb() uint64 {
	if r.err != nil {
		return 0
	}
	v, n, err := uleb(r.b, r.pos)
	if err != nil {
		r.err = err
		return 0
	}
	r.pos += n
	return v
}

func (r *reader) skip(n int) {
	if r.err == nil && r.pos+n > len(r.b) {
		r.err = errors.New("unexpected end")
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

// str reads a name.
func (r *reader) str() string {
	n := int(r.uleb())
	if r.err != nil || n < 0 || r.pos+n > len(r.b) {
		if r.err == nil {
			r.err = errors.New("unexpected end")
		}
		return ""
	}
	s := string(r.b[r.pos : r.pos+n])
	r.pos += n
	return s
}

// uleb decodes an unsigned LEB128 at b[pos:], returning the value and its length. Signed
// LEB128 values have the same length rule (a set high bit continues), so it also skips them.
func uleb(b []byte, pos int) (uint64, int, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		if pos+i >= len(b) {
			return 0, 0, errors.New("LEB128 runs past the end")
		}
		c := b[pos+i]
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("LEB128 too long")
}

func appendULEB(b []byte, v uint64) []byte {
	return binary.AppendUvarint(b, v) // the same encoding as unsigned LEB128
}
