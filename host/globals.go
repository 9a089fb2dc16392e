package host

import (
	"errors"
	"fmt"
	"strconv"
)

// exportGlobals returns a copy of a wasm binary that also exports each of its own mutable
// globals under globalExportPrefix+index, and those names. wazero reaches an instance's
// globals only through exports, and an instance can be reset for reuse only if its globals can
// be put back along with its memory (a Go guest keeps its stack pointer in one). A module it
// cannot rewrite (no export section, a v128 global, a construct this parser does not know) is
// reported with an error, and such a module simply runs on fresh instances.
func exportGlobals(wasm []byte) ([]byte, []string, error) {
	secs, err := sections(wasm)
	if err != nil {
		return nil, nil, err
	}
	var (
		importedGlobals int
		mutable         []int // defined global indexes, in the global index space
		exportStart     = -1  // offset of the export section's id byte
		exportEnd       int
	)
	for _, sec := range secs {
		body := wasm[sec.start:sec.end]
		switch sec.id {
		case sectionImport:
			entries, _, err := importEntries(body)
			if err != nil {
				return nil, nil, fmt.Errorf("import section: %w", err)
			}
			for _, e := range entries {
				if e.kind == 0x03 {
					importedGlobals++
				}
			}
		case 6: // globals
			defined, err := mutableGlobals(body)
			if err != nil {
				return nil, nil, fmt.Errorf("global section: %w", err)
			}
			for _, i := range defined {
				mutable = append(mutable, importedGlobals+i)
			}
		case 7:
			exportStart, exportEnd = sec.pos, sec.end
		}
	}
	if exportStart < 0 {
		return nil, nil, errors.New("no export section")
	}
	// The export section: a count, then its entries as they are; new entries go after them.
	_, sizeLen, err := uleb(wasm, exportStart+1)
	if err != nil {
		return nil, nil, err
	}
	countAt := exportStart + 1 + sizeLen
	oldCount, cn, err := uleb(wasm, countAt)
	if err != nil {
		return nil, nil, err
	}
	entries := wasm[countAt+cn : exportEnd]
	var (
		added []byte
		names []string
	)
	for _, idx := range mutable {
		name := globalExportPrefix + strconv.Itoa(idx)
		names = append(names, name)
		added = appendULEB(added, uint64(len(name)))
		added = append(added, name...)
		added = append(added, 0x03) // export kind: global
		added = appendULEB(added, uint64(idx))
	}
	var section []byte
	section = appendULEB(section, oldCount+uint64(len(names)))
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

// globalExportPrefix names the exports exportGlobals adds; the ABI reserves the wfhost prefix.
const globalExportPrefix = "wfhost.global."

// mutableGlobals returns the section-local indexes of the mutable globals a global section
// defines. A v128 global cannot be read or written whole through wazero's api.Global, so one
// makes the module unsuitable.
func mutableGlobals(b []byte) ([]int, error) {
	r := reader{b: b}
	n := r.uleb()
	var out []int
	for i := range int(n) {
		valtype, mut := r.byte(), r.byte()
		if valtype == 0x7b {
			return nil, errors.New("a v128 global")
		}
		if mut == 1 {
			out = append(out, i)
		}
		r.constExpr()
		if r.err != nil {
			return nil, r.err
		}
	}
	return out, r.err
}

// constExpr skips a constant expression: the instructions a global's initialiser may use,
// with their immediates, up to its end opcode.
func (r *reader) constExpr() {
	for r.err == nil {
		switch op := r.byte(); op {
		case 0x0b: // end
			return
		case 0x41, 0x42, 0x23, 0xd2: // i32.const, i64.const (signed LEB: same length rules), global.get, ref.func
			r.uleb()
		case 0x43: // f32.const
			r.skip(4)
		case 0x44: // f64.const
			r.skip(8)
		case 0xd0: // ref.null
			r.byte()
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended constant arithmetic
		default:
			r.err = fmt.Errorf("opcode %#x in a constant expression", op)
		}
	}
}
