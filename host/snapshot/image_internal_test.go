package snapshot

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"math/bits"
	"runtime"
	"strings"
	"testing"
)

// TestDecodeRefusesABomb: a snapshot is inflated a field at a time and must end where its
// header says, so a small stream that inflates to far more than the largest legitimate image
// is refused after what its header declares, and nothing near its size is allocated. Not
// parallel: it measures the heap.
func TestDecodeRefusesABomb(t *testing.T) {
	// The bomb itself, checked small: it inflates to its prefix and then its zeros.
	if got, err := io.ReadAll(flate.NewReader(zeroBomb([]byte("abc\xff"), 5000))); err != nil ||
		!bytes.Equal(got, append([]byte("abc\xff"), make([]byte, len(got)-4)...)) || len(got) < 4+5000 {
		t.Fatalf("the bomb inflates to %d bytes (%v)", len(got), err)
	}

	// An image of one page, as Encode writes it before compression.
	im := &Image{Memory: make([]byte, pageSize), Globals: []uint64{7}, Buffer: 0, BufferSize: pageSize}
	im.Memory[10] = 1
	var enc bytes.Buffer
	if err := im.Encode(&enc, nil, flate.BestSpeed); err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(enc.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	// A header that counts more globals than any module has, and nothing after it.
	manyGlobals := binary.LittleEndian.AppendUint32([]byte(imageMagic+"\x00\x00\x00\x00\x00\x00\x00\x00"), maxGlobals+1)

	const zeros = 4 * maxImageBytes // 16 GiB: four times the largest legitimate image
	for _, tc := range []struct {
		name, want string
		prefix     []byte
		globals    int
	}{
		{"zeros", "not an image", nil, -1},
		{"an image, then zeros", "goes on past", raw, -1},
		{"an image, then zeros, into a guest's memory", "goes on past", raw, 1},
		{"more globals than any module", "more than a module may have", manyGlobals, -1},
		{"other globals than the module's", "the image has 1 globals, the module 2", raw, 2},
	} {
		var into func(int) ([]byte, error)
		if tc.globals >= 0 {
			mem := make([]byte, pageSize)
			into = func(size int) ([]byte, error) { return mem[:size], nil }
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := decodeImage(zeroBomb(tc.prefix, zeros), nil, into, tc.globals)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
		// The decompressor's window and tables, the block map and a page: well under this.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Fatalf("%s: decoding allocated %d bytes", tc.name, alloc)
		}
	}
	// The image itself still decodes.
	if got, err := decodeImage(bytes.NewReader(enc.Bytes()), nil, nil, -1); err != nil || !bytes.Equal(got.Memory, im.Memory) {
		t.Fatalf("the image: %v", err)
	}
}

// zeroBomb is a raw DEFLATE stream that inflates to prefix and then at least n zero bytes,
// made as it is read, so that a bomb of any size costs the test nothing: one block of the fixed
// Huffman codes (RFC 1951, 3.2.6), the prefix and a zero as literals, then copies of 258 bytes
// at distance 1, 13 bits each, whose bytes repeat every 8 copies.
func zeroBomb(prefix []byte, n int64) io.Reader {
	var w bitWriter
	w.bits(1, 1) // BFINAL
	w.bits(1, 2) // BTYPE 01: fixed codes
	for _, b := range append(prefix, 0) {
		if b < 144 {
			w.huff(0x30+uint64(b), 8)
		} else {
			w.huff(0x190+uint64(b-144), 9)
		}
	}
	copies := func(w *bitWriter) {
		w.huff(0xc5, 8) // length code 285: 258 bytes
		w.huff(0, 5)    // distance code 0: 1 byte back
	}
	for ; w.n != 0; n -= 258 {
		copies(&w)
	}
	var period bitWriter
	for range 8 {
		copies(&period)
	}
	var tail bitWriter
	tail.huff(0, 7) // end of block
	tail.bits(0, 1) // pad to the byte
	rounds := max(n, 0)/(8*258) + 1
	return io.MultiReader(bytes.NewReader(w.out), &repeated{pat: period.out, left: rounds * int64(len(period.out))}, bytes.NewReader(tail.out))
}

// bitWriter writes DEFLATE's bits, least significant first.
type bitWriter struct {
	out []byte
	acc uint64
	n   uint
}

func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.n
	for w.n += n; w.n >= 8; w.n -= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
	}
}

// huff writes a Huffman code, which DEFLATE packs most significant bit first.
func (w *bitWriter) huff(code uint64, n uint) { w.bits(bits.Reverse64(code)>>(64-n), n) }

// repeated reads pat over and over, left bytes in all.
type repeated struct {
	pat  []byte
	off  int
	left int64
}

func (r *repeated) Read(b []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), r.left)]
	for i := range b {
		b[i] = r.pat[r.off]
		r.off = (r.off + 1) % len(r.pat)
	}
	r.left -= int64(len(b))
	return len(b), nil
}
