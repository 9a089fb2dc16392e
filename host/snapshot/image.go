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
	return decodeImage(r, base, nil, -1)
}

// maxGlobals bounds an image's globals: the most the WebAssembly JS API lets a module declare,
// which the host's upload check (host.ModuleBounds) keeps modules within.
const maxGlobals = 1_000_000

// maxImageBytes is the largest legitimate image, decompressed: its header, maxGlobals globals,
// and the block map and every block of a whole 32-bit memory. decodeImage never inflates more:
// it reads the image field by field, checks each count against these bounds before it reads
// what the count counts, and refuses a single byte past the end the header declares. So an
// image that inflates past its own header (a small sealed-but-hostile or damaged snapshot can
// inflate to gigabytes) costs a read of one byte more, never the gigabytes.
const maxImageBytes = int64(len(imageMagic)) + 4 + 4 + 4 + maxGlobals*8 + 4 + maxBlocks + maxBlocks*blockSize

// decodeImage reads an image into the memory that into returns for its size (a guest's own
// memory, already equal to base: the blocks the encoding leaves out are left as they are), or
// with into nil into new memory that grows only as the image's blocks arrive, those it leaves
// out copied from base. globals is the number of globals the image must have, or -1 for any up
// to maxGlobals. It inflates the image a field at a time, straight into its place: nothing is
// allocated for a count before the data it counts has been read, but the block map (at most
// maxBlocks bytes) and the memory into hands out, which the guest's own limit bounds.
func decodeImage(r io.Reader, base []byte, into func(size int) ([]byte, error), globals int) (*Image, error) {
	zr := readerFor(r)
	defer readers.Put(zr)
	ir := &imageReader{r: zr}
	if magic := ir.next(len(imageMagic)); ir.err != nil || string(magic) != imageMagic {
		return nil, ir.fault("not an image")
	}
	im := &Image{Buffer: ir.u32(), BufferSize: ir.u32()}
	n := ir.u32()
	switch {
	case ir.err != nil:
		return nil, ir.fault("")
	case n > maxGlobals:
		return nil, fmt.Errorf("snapshot: decode: %d globals, more than a module may have (%d)", n, maxGlobals)
	case globals >= 0 && int(n) != globals:
		return nil, fmt.Errorf("snapshot: decode: the image has %d globals, the module %d", n, globals)
	}
	for range n {
		if v := ir.u64(); ir.err == nil {
			im.Globals = append(im.Globals, v)
		}
	}
	blocks := int(ir.u32())
	if ir.err != nil {
		return nil, ir.fault("")
	}
	if blocks > maxBlocks || blocks%(pageSize/blockSize) != 0 {
		return nil, fmt.Errorf("snapshot: decode: %d blocks of memory", blocks)
	}
	present := make([]byte, blocks)
	if ir.read(present); ir.err != nil {
		return nil, ir.fault("")
	}
	for p, b := range present {
		switch {
		case b > 1:
			return nil, fmt.Errorf("snapshot: decode: block %d is marked %d", p, b)
		case b == 0 && (p+1)*blockSize > len(base):
			return nil, errors.New("snapshot: decode: a block the base does not have")
		}
	}
	size := blocks * blockSize
	if into != nil {
		mem, err := into(size)
		if err != nil {
			return nil, err
		}
		for p := range blocks {
			if present[p] == 1 {
				ir.read(mem[p*blockSize : (p+1)*blockSize])
			}
		}
		im.Memory = mem
	} else {
		// The blocks base holds cost the caller nothing it does not hold already; memory past
		// them is allocated as the image's blocks arrive, never for a count alone.
		mem := make([]byte, 0, min(size, len(base)))
		for p := 0; p < blocks && ir.err == nil; p++ {
			if present[p] == 0 {
				mem = append(mem, base[p*blockSize:(p+1)*blockSize]...)
				continue
			}
			mem = append(mem, make([]byte, blockSize)...)
			ir.read(mem[p*blockSize:])
		}
		im.Memory = mem
	}
	if ir.err != nil {
		return nil, ir.fault("")
	}
	// The image must end where its header says: one byte more and it is refused, unread.
	var one [1]byte
	switch _, err := io.ReadFull(zr, one[:]); {
	case err == nil:
		return nil, fmt.Errorf("snapshot: decode: the image goes on past the %d bytes of memory its header declares", size)
	case err != io.EOF:
		return nil, fmt.Errorf("snapshot: decode: %w", err)
	}
	return im, nil
}

// imageReader reads an image's fields from its decompressor; the first fault sticks.
type imageReader struct {
	r   io.Reader
	buf [8]byte
	err error
}

func (ir *imageReader) read(b []byte) {
	if ir.err == nil {
		_, ir.err = io.ReadFull(ir.r, b)
	}
}

// next reads n (at most 8) bytes into the reader's buffer.
func (ir *imageReader) next(n int) []byte {
	ir.read(ir.buf[:n])
	return ir.buf[:n]
}

func (ir *imageReader) u32() uint32 { return binary.LittleEndian.Uint32(ir.next(4)) }
func (ir *imageReader) u64() uint64 { return binary.LittleEndian.Uint64(ir.next(8)) }

// fault is the error for the reader's fault, or for what (when the bytes read were wrong).
func (ir *imageReader) fault(what string) error {
	switch {
	case ir.err == io.EOF || ir.err == io.ErrUnexpectedEOF:
		return errors.New("snapshot: decode: truncated")
	case ir.err != nil:
		return fmt.Errorf("snapshot: decode: %w", ir.err)
	}
	return errors.New("snapshot: decode: " + what)
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
