package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// maxDescribeBytes bounds the description a module may return.
const maxDescribeBytes = 1 << 20

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

type signature struct{ params, results []api.ValueType }

// wasmSignature is an abi signature in wazero's types.
func wasmSignature(s abi.Signature) signature {
	return signature{wasmTypes(s.ParamTypes()), wasmTypes(s.Results)}
}

func wasmTypes(ts []abi.ValueType) []api.ValueType {
	var out []api.ValueType
	for _, t := range ts {
		switch t {
		case abi.I32:
			out = append(out, i32)
		case abi.I64:
			out = append(out, i64)
		default:
			panic("abi value type " + t.String() + " has no wazero type")
		}
	}
	return out
}

// nativeImports and extismImports are the functions a module may import, from abi.ImportModule
// and from ExtismUserModule: abi.HostFuncs with their native and their Extism signatures.
var nativeImports, extismImports = hostImports()

func hostImports() (native, extism map[string]signature) {
	native, extism = map[string]signature{}, map[string]signature{}
	for _, f := range abi.HostFuncs {
		native[f.Name] = wasmSignature(f.Native())
		if !f.NativeOnly {
			extism[f.Name] = wasmSignature(f.Extism())
		}
	}
	return native, extism
}

const wasiModule = "wasi_snapshot_preview1"

// loadTimeout bounds a shared load beyond its compile and describe: the waits for compile
// slots.
const loadTimeout = 2 * time.Minute

// loading is one load of a digest, shared by every caller that asked for it and owned by
// none (shared).
type loading struct {
	shared
	mod *Module
	err error
}

// Load is LoadAs for no particular tenant: its compile is bounded only by MaxCompiles.
func (r *Runtime) Load(ctx context.Context, wasm []byte) (*Module, error) {
	return r.LoadAs(ctx, "", wasm)
}

// LoadAs validates and compiles wasm for a tenant, once per digest: concurrent loads of one
// module share one. The module is checked structurally first (wasmcheck.go), then compiled in
// a compile worker (compileworker.go) holding the tenant's compile slot, then described. Every
// failure that is the module's fault wraps ErrInvalidModule; one that is not (the caller's
// context, the Runtime closing, a worker that could not start) never does, and is not kept.
func (r *Runtime) LoadAs(ctx context.Context, tenant string, wasm []byte) (*Module, error) {
	if len(wasm) > r.cfg.MaxModuleBytes {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrInvalidModule, len(wasm), r.cfg.MaxModuleBytes)
	}
	sum := sha256.Sum256(wasm)
	digest := hex.EncodeToString(sum[:])

	r.mu.Lock()
	m := r.modules[digest]
	r.mu.Unlock()
	if m != nil {
		return m, nil
	}
	// Bounded in time and memory by the module's size; nothing of wazero's runs before it.
	facts, err := checkModule(wasm, r.cfg.Bounds)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidModule, err)
	}

	r.mu.Lock()
	if m := r.modules[digest]; m != nil {
		r.mu.Unlock()
		return m, nil
	}
	if r.life.Err() != nil {
		r.mu.Unlock()
		return nil, errors.New("load: the runtime is closed")
	}
	l := r.loadings[digest]
	if l == nil {
		sh, lctx := newShared(r.life, r.cfg.CompileTimeout+r.cfg.DescribeTimeout+loadTimeout)
		l = &loading{shared: sh}
		r.loadings[digest] = l
		r.loadsRun.Add(1)
		go r.runLoad(lctx, l, tenant, digest, bytes.Clone(wasm), facts)
	}
	l.join()
	r.mu.Unlock()

	err = l.wait(ctx, &r.mu, func() {
		if r.loadings[digest] == l {
			delete(r.loadings, digest)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the module's load: %w", err)
	}
	return l.mod, l.err
}

// runLoad is one shared load.
func (r *Runtime) runLoad(ctx context.Context, l *loading, tenant, digest string, wasm []byte, facts moduleFacts) {
	defer r.loadsRun.Done()
	mod, err := r.load(ctx, tenant, digest, wasm, facts)
	if err != nil && !errors.Is(err, ErrInvalidModule) && ctx.Err() != nil {
		err = fmt.Errorf("load stopped: %w (%v)", context.Cause(ctx), err)
	}
	r.mu.Lock()
	if r.loadings[digest] == l {
		delete(r.loadings, digest)
	}
	if err == nil {
		r.modules[digest] = mod
	}
	l.mod, l.err = mod, err
	r.mu.Unlock()
	l.finish()
}

func (r *Runtime) load(ctx context.Context, tenant, digest string, wasm []byte, facts moduleFacts) (*Module, error) {
	m := &Module{Digest: digest, Size: len(wasm), wasm: wasm, code: wasm, codeDigest: digest, MinMemoryPages: facts.MinMemoryPages}
	if isExtismModule(wasm) {
		m.Extism = true
		return r.loadExtism(ctx, tenant, m)
	}
	if code := r.transform(ctx, tenant, m); code != nil {
		sum := sha256.Sum256(code)
		m.code, m.snapshots, m.codeDigest = code, true, hex.EncodeToString(sum[:])
	}
	rt, c, compile, err := r.compiledFor(ctx, tenant, m, max(DefaultLimits().MemoryPages, m.MinMemoryPages))
	if err != nil {
		return nil, err
	}
	cm := c.cm
	m.CompileTime = compile
	if err := checkShape(cm); err != nil {
		r.forget(digest)
		return nil, fmt.Errorf("%w: %v", ErrInvalidModule, err)
	}
	_, m.hasInitialize = cm.ExportedFunctions()[abi.ExportInitialize]
	if err := r.describe(ctx, tenant, rt, cm, m); err != nil {
		r.forget(digest)
		return nil, err
	}
	return m, nil
}

// forget drops the compiled code of a module that failed validation.
func (r *Runtime) forget(digest string) {
	r.mu.Lock()
	pages := make([]*pagedRuntime, 0, len(r.byPages))
	for _, p := range r.byPages {
		pages = append(pages, p)
	}
	r.mu.Unlock()
	for _, p := range pages {
		p.mu.Lock()
		e := p.compiled[digest]
		delete(p.compiled, digest)
		p.mu.Unlock()
		if e == nil {
			continue
		}
		<-e.done
		if e.c != nil {
			e.c.closeIdle(context.Background())
			_ = e.c.cm.Close(context.Background())
		}
	}
}

// checkShape compares the module's imports and exports with ABI.md §1 and §3.
func checkShape(cm wazero.CompiledModule) error {
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		switch mod {
		case abi.ImportModule:
			want, ok := nativeImports[name]
			if !ok {
				return fmt.Errorf("module imports %s.%s, which wfhost does not provide", mod, name)
			}
			if err := checkImport(f, want); err != nil {
				return err
			}
		case wasiModule:
		case "wasi":
			if name == "thread-spawn" {
				// wasi-threads: a thread the guest starts races the workflow's own code.
				return fmt.Errorf("module imports wasi.thread-spawn (wasi-threads): threads are not supported, they are not deterministic")
			}
			return fmt.Errorf("module imports %s.%s; only %q and %q imports are allowed", mod, name, abi.ImportModule, wasiModule)
		default:
			return fmt.Errorf("module imports %s.%s; only %q and %q imports are allowed", mod, name, abi.ImportModule, wasiModule)
		}
	}
	for _, mem := range cm.ImportedMemories() {
		mod, name, _ := mem.Import()
		return fmt.Errorf("module imports memory %s.%s; it must define and export its own", mod, name)
	}
	if _, ok := cm.ExportedMemories()[abi.ExportMemory]; !ok {
		return fmt.Errorf("module does not export its memory as %q", abi.ExportMemory)
	}
	return checkExports(cm, abi.GuestExports)
}

// checkImport requires an imported host function to have the signature the host gives it.
func checkImport(f api.FunctionDefinition, want signature) error {
	if sameSignature(f, want) {
		return nil
	}
	mod, name, _ := f.Import()
	return fmt.Errorf("module imports %s.%s as %s, want %s", mod, name, sigString(f.ParamTypes(), f.ResultTypes()), sigString(want.params, want.results))
}

// checkExports requires every export of want but the optional ones, and every one present to
// have its signature.
func checkExports(cm wazero.CompiledModule, want []abi.Export) error {
	exports := cm.ExportedFunctions()
	for _, e := range want {
		f, ok := exports[e.Name]
		if !ok {
			if e.Optional {
				continue
			}
			return fmt.Errorf("module does not export %s", e.Name)
		}
		sig := wasmSignature(e.Signature())
		if !sameSignature(f, sig) {
			return fmt.Errorf("module exports %s as %s, want %s", e.Name, sigString(f.ParamTypes(), f.ResultTypes()), sigString(sig.params, sig.results))
		}
	}
	return nil
}

func sameSignature(f api.FunctionDefinition, s signature) bool {
	return slices.Equal(f.ParamTypes(), s.params) && slices.Equal(f.ResultTypes(), s.results)
}

func sigString(params, results []api.ValueType) string {
	name := func(ts []api.ValueType) string {
		var b []string
		for _, t := range ts {
			b = append(b, api.ValueTypeName(t))
		}
		return "(" + strings.Join(b, ", ") + ")"
	}
	return name(params) + " -> " + name(results)
}

// errDescribeDeadline is the cause of Config.DescribeTimeout, told apart from the load's own end.
var errDescribeDeadline = errors.New("describe deadline")

// notTheModules replaces the error of a describe call with one that does not wrap
// ErrInvalidModule when the call ended because the load was stopped (every waiting caller
// left, or the Runtime closed): a guest trapped by a cancelled context is not a broken guest.
func notTheModules(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && !errors.Is(context.Cause(ctx), errDescribeDeadline) {
		return fmt.Errorf("load stopped: %w", context.Cause(ctx))
	}
	return err
}

// describe instantiates the module once to read its ABI version and description.
func (r *Runtime) describe(ctx context.Context, tenant string, rt wazero.Runtime, cm wazero.CompiledModule, m *Module) error {
	return r.describeOnCore(ctx, tenant, func(ctx context.Context, st *state) error {
		return r.describeIn(ctx, st, rt, cm, m)
	})
}

// describeIn is describe's calls; ctx carries st.
func (r *Runtime) describeIn(ctx context.Context, st *state, rt wazero.Runtime, cm wazero.CompiledModule, m *Module) error {
	inst, err := rt.InstantiateModule(ctx, cm, st.moduleConfig())
	if err != nil {
		return fmt.Errorf("%w: instantiate: %s%s", ErrInvalidModule, firstLine(err), st.stderrTail())
	}
	defer inst.Close(context.WithoutCancel(ctx))
	if m.hasInitialize {
		if _, err := inst.ExportedFunction(abi.ExportInitialize).Call(ctx); err != nil {
			return fmt.Errorf("%w: %s trapped: %s%s", ErrInvalidModule, abi.ExportInitialize, firstLine(err), st.stderrTail())
		}
	}
	res, err := inst.ExportedFunction(abi.ExportABIVersion).Call(ctx)
	if err != nil {
		return fmt.Errorf("%w: %s trapped: %s", ErrInvalidModule, abi.ExportABIVersion, firstLine(err))
	}
	m.ABIVersion = int(int32(res[0]))
	if m.ABIVersion != abi.Version {
		return fmt.Errorf("%w: module speaks ABI version %d; this host speaks %d", ErrInvalidModule, m.ABIVersion, abi.Version)
	}
	res, err = inst.ExportedFunction(abi.ExportDescribe).Call(ctx)
	if err != nil {
		return st.describeFailed(ctx, err, r.cfg.DescribeTimeout)
	}
	ptr, n := abi.UnpackPtrLen(res[0])
	if n > maxDescribeBytes {
		return fmt.Errorf("%w: description is %d bytes, the limit is %d", ErrInvalidModule, n, maxDescribeBytes)
	}
	raw, ok := inst.Memory().Read(ptr, n)
	if !ok {
		return fmt.Errorf("%w: description at %d+%d is outside the module's memory", ErrInvalidModule, ptr, n)
	}
	return m.describeAs(raw)
}

// describeFailed is Load's error for a describe call that did not return.
func (st *state) describeFailed(ctx context.Context, err error, limit time.Duration) error {
	if errors.Is(context.Cause(ctx), errDescribeDeadline) {
		return fmt.Errorf("%w: %s did not return within %v", ErrInvalidModule, abi.ExportDescribe, limit)
	}
	return fmt.Errorf("%w: %s trapped: %s%s", ErrInvalidModule, abi.ExportDescribe, firstLine(err), st.stderrTail())
}

// describeAs parses and checks the description describe returned (abi.DecodeDescription),
// and keeps it.
func (m *Module) describeAs(raw []byte) error {
	d, err := abi.DecodeDescription(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidModule, err)
	}
	m.Description = d
	return nil
}
