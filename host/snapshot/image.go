package snapshot

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Image is a suspended guest's whole state: its linear memory (the saved wasm call stack is in
// the unwind buffer inside it) and its mutable globals, in the order of the names Transform
// returned. The host's own state of the pass (journal cursor, step keys reached, clock,
// random stream) is not in it: the caller stores that beside it.
type Image struct {
	Memory             []byte
	Globals            []uint64
	Buffer, BufferSize uint32
}

// imageMagic starts an encoded image; the digit is the format's version.
const imageMagic = "WFSNAP1\n"

// Encode writes im, compressed with DEFLATE at level (flate.BestSpeed ... flate.BestCompression).
// With base (the module's memory right after initialisation, which the host already holds) only
// the pages that differ from it are written; Decode needs the same base.
func (im *Image) Encode(w io.Writer, base []byte, level int) error {
	if len(im.Memory)%pageSize != 0 {
		return errors.New("snapshot: memory is not whole pages")
	}
	zw, err := flate.NewWriter(w, level)
	if err != nil {
		return err
	}
	var hdr []byte
	hdr = append(hdr, imageMagic...)
	hdr = binary.LittleEndian.AppendUint32(hdr, im.Buffer)
	hdr = binary.LittleEndian.AppendUint32(hdr, im.BufferSize)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(im.Globals)))
	for _, v := range im.Globals {
		hdr = binary.LittleEndian.AppendUint64(hdr, v)
	}
	pages := len(im.Memory) / pageSize
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(pages))
	// One byte a page: 1 when the page follows, 0 when it is base's.
	for p := range pages {
		hdr = append(hdr, b2u(!samePage(im.Memory, base, p)))
	}
	if _, err := zw.Write(hdr); err != nil {
		return err
	}
	for p := range pages {
		if !samePage(im.Memory, base, p) {
			if _, err := zw.Write(im.Memory[p*pageSize : (p+1)*pageSize]); err != nil {
				return err
			}
		}
	}
	return zw.Close()
}

// DecodeImage reads an image Encode wrote with the same base.
func DecodeImage(r io.Reader, base []byte) (*Image, error) {
	zr := flate.NewReader(r)
	defer zr.Close()
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("snapshot: decode: %w", err)
	}
	d := &decoder{b: b}
	if string(d.next(len(imageMagic))) != imageMagic {
		return nil, errors.New("snapshot: decode: not an image")
	}
	im := &Image{Buffer: d.u32(), BufferSize: d.u32()}
	n := d.u32()
	for range n {
		im.Globals = append(im.Globals, binary.LittleEndian.Uint64(d.next(8)))
	}
	pages := int(d.u32())
	present := d.next(pages)
	if d.err != nil {
		return nil, fmt.Errorf("snapshot: decode: %w", d.err)
	}
	im.Memory = make([]byte, pages*pageSize)
	for p := range pages {
		dst := im.Memory[p*pageSize : (p+1)*pageSize]
		if present[p] == 1 {
			copy(dst, d.next(pageSize))
			continue
		}
		if (p+1)*pageSize > len(base) {
			return nil, errors.New("snapshot: decode: a page the base does not have")
		}
		copy(dst, base[p*pageSize:])
	}
	if d.err != nil {
		return nil, fmt.Errorf("snapshot: decode: %w", d.err)
	}
	return im, nil
}

// EncodedSize is the length of im's encoding, for measurements.
func (im *Image) EncodedSize(base []byte, level int) int {
	var buf bytes.Buffer
	if err := im.Encode(&buf, base, level); err != nil {
		return -1
	}
	return buf.Len()
}

func samePage(mem, base []byte, p int) bool {
	end := (p + 1) * pageSize
	return end <= len(base) && bytes.Equal(mem[p*pageSize:end], base[p*pageSize:end])
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) next(n int) []byte {
	if d.err != nil || n > len(d.b) {
		d.err = errors.New("truncated")
		return make([]byte, n)
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) u32() uint32 { return binary.LittleEndian.Uint32(d.next(4)) }
