package snapshot

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
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

// blockSize is the unit of an encoding's delta from its base: small enough that a few changed
// bytes do not carry a whole 64 KiB page into the compressor, large enough that the map of
// blocks stays small (one byte per 4 KiB).
const blockSize = 4 << 10

// Encode writes im, compressed with DEFLATE at level (flate.BestSpeed ... flate.BestCompression).
// With base (the module's memory right after initialisation, which the host already holds) only
// the 4 KiB blocks that differ from it are written; DecodeImage needs the same base.
func (im *Image) Encode(w io.Writer, base []byte, level int) error {
	if len(im.Memory)%pageSize != 0 {
		return errors.New("snapshot: memory is not whole pages")
	}
	zw, err := writerFor(w, level)
	if err != nil {
		return err
	}
	defer writers[level-flate.HuffmanOnly].Put(zw)
	var hdr []byte
	hdr = append(hdr, imageMagic...)
	hdr = binary.LittleEndian.AppendUint32(hdr, im.Buffer)
	hdr = binary.LittleEndian.AppendUint32(hdr, im.BufferSize)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(im.Globals)))
	for _, v := range im.Globals {
		hdr = binary.LittleEndian.AppendUint64(hdr, v)
	}
	blocks := len(im.Memory) / blockSize
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(blocks))
	// One byte a block: 1 when the block follows, 0 when it is base's.
	changed := make([]bool, blocks)
	for p := range blocks {
		changed[p] = !sameBlock(im.Memory, base, p)
		hdr = append(hdr, b2u(changed[p]))
	}
	if _, err := zw.Write(hdr); err != nil {
		return err
	}
	for p := range blocks {
		if changed[p] {
			if _, err := zw.Write(im.Memory[p*blockSize : (p+1)*blockSize]); err != nil {
				return err
			}
		}
	}
	return zw.Close()
}

// DecodeImage reads an image Encode wrote with the same base.
func DecodeImage(r io.Reader, base []byte) (*Image, error) {
	return decodeImage(r, base, func(size int) ([]byte, error) { return make([]byte, size), nil }, true)
}

// decodeImage reads an image into the memory that memory returns for its size. Blocks the
// encoding leaves out are copied from base when fill is set, and otherwise left as they are
// (memory already holds base there).
func decodeImage(r io.Reader, base []byte, memory func(size int) ([]byte, error), fill bool) (*Image, error) {
	zr := readerFor(r)
	defer readers.Put(zr)
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("snapshot: decode: %w", err)
	}
	d := NewDecoder(b)
	if string(d.Next(len(imageMagic))) != imageMagic {
		return nil, errors.New("snapshot: decode: not an image")
	}
	im := &Image{Buffer: d.U32(), BufferSize: d.U32()}
	n := d.U32()
	if int(n) > len(d.Rest())/8 {
		return nil, errors.New("snapshot: decode: truncated")
	}
	for range n {
		im.Globals = append(im.Globals, d.U64())
	}
	blocks := int(d.U32())
	if blocks > maxBlocks || blocks%(pageSize/blockSize) != 0 {
		return nil, fmt.Errorf("snapshot: decode: %d blocks of memory", blocks)
	}
	present := d.Next(blocks)
	if d.Err() != nil {
		return nil, fmt.Errorf("snapshot: decode: %w", d.Err())
	}
	want := 0
	for p := range blocks {
		if present[p] == 1 {
			want += blockSize
		} else if (p+1)*blockSize > len(base) {
			return nil, errors.New("snapshot: decode: a block the base does not have")
		}
	}
	if want != len(d.Rest()) {
		return nil, errors.New("snapshot: decode: truncated")
	}
	if im.Memory, err = memory(blocks * blockSize); err != nil {
		return nil, err
	}
	for p := range blocks {
		dst := im.Memory[p*blockSize : (p+1)*blockSize]
		switch {
		case present[p] == 1:
			copy(dst, d.Next(blockSize))
		case fill:
			copy(dst, base[p*blockSize:])
		}
	}
	return im, nil
}

// readers keep DEFLATE readers for reuse.
var readers sync.Pool

func readerFor(r io.Reader) io.ReadCloser {
	if zr, ok := readers.Get().(io.ReadCloser); ok {
		if err := zr.(flate.Resetter).Reset(r, nil); err == nil {
			return zr
		}
	}
	return flate.NewReader(r)
}

// EncodedSize is the length of im's encoding, for measurements.
func (im *Image) EncodedSize(base []byte, level int) int {
	var buf bytes.Buffer
	if err := im.Encode(&buf, base, level); err != nil {
		return -1
	}
	return buf.Len()
}

// writers keep DEFLATE writers for reuse, one pool per level: making one costs about 0.3 ms
// (its tables), several times the compression of a typical image.
var writers [flate.BestCompression - flate.HuffmanOnly + 1]sync.Pool

func writerFor(w io.Writer, level int) (*flate.Writer, error) {
	if level < flate.HuffmanOnly || level > flate.BestCompression {
		return nil, fmt.Errorf("snapshot: compression level %d", level)
	}
	if zw, ok := writers[level-flate.HuffmanOnly].Get().(*flate.Writer); ok {
		zw.Reset(w)
		return zw, nil
	}
	return flate.NewWriter(w, level)
}

// maxBlocks is 4 GiB of memory, the most a 32-bit memory has.
const maxBlocks = 1 << 32 / blockSize

func sameBlock(mem, base []byte, p int) bool {
	end := (p + 1) * blockSize
	return end <= len(base) && bytes.Equal(mem[p*blockSize:end], base[p*blockSize:end])
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Decoder reads fields from encoded bytes (an image here, the host's pass state beside it in
// host/snapshots.go); the first fault sticks, and a length read from damaged bytes allocates
// nothing: a short read returns at most the zeros a fixed-size field needs.
type Decoder struct {
	b   []byte
	err error
}

// NewDecoder reads b.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

// Next returns the next n bytes.
func (d *Decoder) Next(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.err = errors.New("truncated")
		return make([]byte, min(max(n, 0), 8))
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

// U32 and U64 read little-endian integers; Bytes reads a U32 length and that many bytes.
func (d *Decoder) U32() uint32   { return binary.LittleEndian.Uint32(d.Next(4)) }
func (d *Decoder) U64() uint64   { return binary.LittleEndian.Uint64(d.Next(8)) }
func (d *Decoder) Bytes() []byte { return d.Next(int(d.U32())) }

// Rest is what is left unread.
func (d *Decoder) Rest() []byte { return d.b }

// Err is the first fault, if any.
func (d *Decoder) Err() error { return d.err }
