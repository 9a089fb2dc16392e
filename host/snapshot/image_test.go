package snapshot_test

import (
	"bytes"
	"compress/flate"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/wfhost/wfhost/host/snapshot"
)

func TestImageRoundTrip(t *testing.T) {
	t.Parallel()
	base := make([]byte, 2<<16)
	for i := range base {
		base[i] = byte(i * 7)
	}
	mem := append(bytes.Clone(base), make([]byte, 1<<16)...)
	mem[5000] ^= 1         // a changed block in a page of base
	mem[len(mem)-1] = 0xff // a page base does not have
	im := &snapshot.Image{Memory: mem, Globals: []uint64{1, 1 << 63}, Buffer: 2 << 16, BufferSize: 1 << 16}
	for _, b := range [][]byte{nil, base} {
		var buf bytes.Buffer
		if err := im.Encode(&buf, b, flate.BestSpeed); err != nil {
			t.Fatal(err)
		}
		got, err := snapshot.DecodeImage(bytes.NewReader(buf.Bytes()), b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Memory, im.Memory) || !slices.Equal(got.Globals, im.Globals) ||
			got.Buffer != im.Buffer || got.BufferSize != im.BufferSize {
			t.Fatalf("with base %v: the image changed", b != nil)
		}
		// A truncated encoding is an error, never a short image.
		if _, err := snapshot.DecodeImage(bytes.NewReader(buf.Bytes()[:buf.Len()/2]), b); err == nil {
			t.Fatal("a truncated image decoded")
		}
	}
	// A delta decoded against a shorter base is refused.
	var buf bytes.Buffer
	if err := im.Encode(&buf, base, flate.BestSpeed); err != nil {
		t.Fatal(err)
	}
	if _, err := snapshot.DecodeImage(&buf, base[:1<<16]); err == nil {
		t.Fatal("decoded against the wrong base")
	}
}

func TestExportGlobalsAndNewGuest(t *testing.T) {
	t.Parallel()
	wasm := fixture(t, "examples_rust.wasm")
	out, names, err := snapshot.ExportGlobals(wasm, snapshot.GlobalPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 || !strings.HasPrefix(names[0], snapshot.GlobalPrefix) {
		t.Fatalf("globals %q", names)
	}
	ctx := context.Background()
	cm, err := runtime(t).CompileModule(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := runtime(t).InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	for _, n := range names {
		if mod.ExportedGlobal(n) == nil {
			t.Fatalf("%s is not exported", n)
		}
	}
	// Without the transform there is nothing to unwind with.
	if _, err := snapshot.NewGuest(mod, names); err == nil || !strings.Contains(err.Error(), "not transformed") {
		t.Fatalf("NewGuest on an untransformed module: %v", err)
	}
}
