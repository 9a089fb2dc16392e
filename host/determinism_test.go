package host_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/wasmgen"
)

// TestUploadRefusesWhatIsNotDeterministicAcrossHosts: a module that could behave differently on
// another host (threads and shared memory, atomics, relaxed SIMD, wasi-threads) is refused at
// upload with an error that names the instruction or import (ABI.md §6, "Across hosts").
func TestUploadRefusesWhatIsNotDeterministicAcrossHosts(t *testing.T) {
	t.Parallel()
	r := runtime(t)
	// extra is a module whose one extra function's body is body.
	extra := func(body ...byte) []byte {
		return wasmgen.Workflow{Extra: []wasmgen.Func{{Type: wasmgen.FuncType{}, Body: body}}}.Encode()
	}
	v128 := append([]byte{0xfd, 0x0c}, make([]byte, 16)...) // v128.const 0
	relaxed := func(sub uint64, operands int) []byte {
		var body []byte
		for range operands {
			body = append(body, v128...)
		}
		body = append(body, 0xfd)
		body = append(body, wasmgen.ULEB(sub)...)
		return append(body, wasmgen.OpDrop)
	}
	// The workflow module's memory section (one memory, no maximum, minimum 1) made shared,
	// which needs a maximum.
	plain := []byte{0x05, 0x03, 0x01, 0x00, 0x01}
	base := wasmgen.Workflow{}.Encode()
	if bytes.Count(base, plain) != 1 {
		t.Fatalf("the workflow module's memory section is not %x", plain)
	}
	shared := bytes.Replace(base, plain, []byte{0x05, 0x04, 0x01, 0x03, 0x01, 0x01}, 1)

	threadSpawn := wasmgen.Module{
		Imports: []wasmgen.Import{{Module: "wasi", Name: "thread-spawn", Type: wasmgen.FuncType{Params: []byte{wasmgen.I32}, Results: []byte{wasmgen.I32}}}},
		Funcs:   []wasmgen.Func{{Type: wasmgen.FuncType{}, Export: abi.ExportRun}}, HasMemory: true, MemoryMin: 1,
	}.Encode()

	for _, c := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"shared memory", shared, "memory limits flags 0x3 declare a shared memory (threads)"},
		{"i32.atomic.load", extra(wasmgen.OpI32Const, 0, 0xfe, 0x10, 0x02, 0x00, wasmgen.OpDrop), "atomic instruction i32.atomic.load (0xfe 0x10) (threads)"},
		{"atomic.fence", extra(0xfe, 0x03, 0x00), "atomic instruction atomic.fence (0xfe 0x3)"},
		{"memory.atomic.notify", extra(wasmgen.OpI32Const, 0, wasmgen.OpI32Const, 1, 0xfe, 0x00, 0x02, 0x00, wasmgen.OpDrop), "memory.atomic.notify (0xfe 0x0)"},
		{"i64.atomic.rmw16.cmpxchg_u", extra(0xfe, 0x4d, 0x01, 0x00), "i64.atomic.rmw16.cmpxchg_u (0xfe 0x4d)"},
		{"i32.atomic.rmw8.add_u", extra(0xfe, 0x20, 0x00, 0x00), "i32.atomic.rmw8.add_u (0xfe 0x20)"},
		{"i8x16.relaxed_swizzle", extra(relaxed(0x100, 2)...), "relaxed SIMD instruction i8x16.relaxed_swizzle (0xfd 256)"},
		{"f32x4.relaxed_madd", extra(relaxed(0x105, 3)...), "relaxed SIMD instruction f32x4.relaxed_madd (0xfd 261)"},
		{"i32x4.relaxed_dot_i8x16_i7x16_add_s", extra(relaxed(0x113, 3)...), "i32x4.relaxed_dot_i8x16_i7x16_add_s (0xfd 275)"},
		{"wasi-threads", threadSpawn, "module imports wasi.thread-spawn (wasi-threads): threads are not supported"},
	} {
		_, err := r.Load(context.Background(), c.wasm)
		if !errors.Is(err, host.ErrInvalidModule) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidModule naming %q", c.name, err, c.want)
		}
	}
	// Fixed-width SIMD, deterministic but for NaN bits like scalar floats, still loads.
	if _, err := r.Load(context.Background(), extra(append(append(v128, v128...), 0xfd, 0x6e, wasmgen.OpDrop)...)); err != nil { // i8x16.add
		t.Fatalf("a module with fixed-width SIMD: %v", err)
	}
}

// TestNaNBitsOnThisHost measures what RATIONALE.md ("NaN bits across hosts") reports: the bits
// of a NaN a float operation makes from non-NaN operands, in wazero's compiler and interpreter.
// Wasm leaves the sign and payload of such a NaN to the CPU (x86 sets the sign, ARM does not)
// and wazero does not canonicalise it, so the test asserts only that the value is a NaN.
func TestNaNBitsOnThisHost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f32 := []byte{0x43, 0, 0, 0, 0} // f32.const 0
	f64 := []byte{0x44, 0, 0, 0, 0, 0, 0, 0, 0}
	body32 := append(append(append([]byte{}, f32...), f32...), 0x95, 0xbc) // f32.div, i32.reinterpret_f32
	body64 := append(append(append([]byte{}, f64...), f64...), 0xa3, 0xbd) // f64.div, i64.reinterpret_f64
	wasm := wasmgen.Module{Funcs: []wasmgen.Func{
		{Type: wasmgen.FuncType{Results: []byte{wasmgen.I32}}, Body: body32, Export: "nan32"},
		{Type: wasmgen.FuncType{Results: []byte{wasmgen.I64}}, Body: body64, Export: "nan64"},
	}}.Encode()
	for name, cfg := range map[string]wazero.RuntimeConfig{"compiler": wazero.NewRuntimeConfigCompiler(), "interpreter": wazero.NewRuntimeConfigInterpreter()} {
		rt := wazero.NewRuntimeWithConfig(ctx, cfg)
		defer rt.Close(ctx)
		mod, err := rt.Instantiate(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		r32, err := mod.ExportedFunction("nan32").Call(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r64, err := mod.ExportedFunction("nan64").Call(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b32, b64 := uint32(r32[0]), r64[0]
		if !math.IsNaN(float64(math.Float32frombits(b32))) || !math.IsNaN(math.Float64frombits(b64)) {
			t.Fatalf("%s: 0/0 gave %#x and %#x, not NaNs", name, b32, b64)
		}
		t.Logf("%s: f32 0/0 = %#08x, f64 0/0 = %#016x (canonical: 0x7fc00000, 0x7ff8000000000000)", name, b32, b64)
	}
}
