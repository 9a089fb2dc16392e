package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// describeDeadline bounds the calls Load makes into a module: a hostile describe must not hold
// an upload for long.
const describeDeadline = 5 * time.Second

// maxDescribeBytes bounds the description a module may return.
const maxDescribeBytes = 1 << 20

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

type signature struct{ params, results []api.ValueType }

// hostImports are the functions a guest may import from abi.ImportModule.
var hostImports = map[string]signature{
	abi.FuncStepRun:     {[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i64}},
	abi.FuncStepDone:    {[]api.ValueType{i32, i32, i32}, []api.ValueType{i64}},
	abi.FuncSleep:       {[]api.ValueType{i32, i32, i64}, []api.ValueType{i64}},
	abi.FuncSleepUntil:  {[]api.ValueType{i32, i32, i64}, []api.ValueType{i64}},
	abi.FuncWaitEvent:   {[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i64}},
	abi.FuncTake:        {[]api.ValueType{i32, i32}, nil},
	abi.FuncLog:         {[]api.ValueType{i32, i32, i32}, nil},
	abi.FuncComplete:    {[]api.ValueType{i32, i32}, nil},
	abi.FuncFail:        {[]api.ValueType{i32, i32}, nil},
	abi.FuncHTTPRequest: {[]api.ValueType{i32, i32}, []api.ValueType{i64}},
	abi.FuncSecretGet:   {[]api.ValueType{i32, i32}, []api.ValueType{i64}},
}

// guestExports are the functions a module must export.
var guestExports = map[string]signature{
	abi.ExportABIVersion: {nil, []api.ValueType{i32}},
	abi.ExportAlloc:      {[]api.ValueType{i32}, []api.ValueType{i32}},
	abi.ExportDescribe:   {nil, []api.ValueType{i64}},
	abi.ExportRun:        {[]api.ValueType{i32, i32, i32, i32}, nil},
}

const wasiModule = "wasi_snapshot_preview1"

// Load validates and compiles wasm, once per digest: concurrent loads of one module wait for
// the first. Every failure that is the module's fault wraps ErrInvalidModule.
func (r *Runtime) Load(ctx context.Context, wasm []byte) (*Module, error) {
	if len(wasm) > r.cfg.MaxModuleBytes {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrInvalidModule, len(wasm), r.cfg.MaxModuleBytes)
	}
	sum := sha256.Sum256(wasm)
	digest := hex.EncodeToString(sum[:])

	r.mu.Lock()
	if m := r.modules[digest]; m != nil {
		r.mu.Unlock()
		return m, nil
	}
	if l := r.loadings[digest]; l != nil {
		r.mu.Unlock()
		select {
		case <-l.done:
			return l.mod, l.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l := &loading{done: make(chan struct{})}
	r.loadings[digest] = l
	r.mu.Unlock()

	l.mod, l.err = r.load(ctx, digest, bytes.Clone(wasm))
	r.mu.Lock()
	delete(r.loadings, digest)
	if l.err == nil {
		r.modules[digest] = l.mod
	}
	r.mu.Unlock()
	close(l.done)
	return l.mod, l.err
}

func (r *Runtime) load(ctx context.Context, digest string, wasm []byte) (*Module, error) {
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		return nil, fmt.Errorf("%w: not a WebAssembly module (no \\0asm header)", ErrInvalidModule)
	}
	if isExtismModule(wasm) {
		return r.loadExtism(ctx, digest, wasm)
	}
	m := &Module{Digest: digest, Size: len(wasm), wasm: wasm}
	rt, c, compile, err := r.compiledFor(ctx, m, DefaultLimits().MemoryPages)
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
	if err := r.describe(ctx, rt, cm, m); err != nil {
		r.forget(digest)
		return nil, err
	}
	return m, nil
}

// forget drops the compiled code of a module that failed validation.
func (r *Runtime) forget(digest string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.byPages {
		p.mu.Lock()
		if c := p.compiled[digest]; c != nil {
			c.closeIdle(context.Background())
			_ = c.cm.Close(context.Background())
			delete(p.compiled, digest)
		}
		p.mu.Unlock()
	}
}

// checkShape compares the module's imports and exports with ABI.md §1 and §3.
func checkShape(cm wazero.CompiledModule) error {
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		switch mod {
		case abi.ImportModule:
			want, ok := hostImports[name]
			if !ok {
				return fmt.Errorf("module imports %s.%s, which wfhost does not provide", mod, name)
			}
			if err := checkImport(f, want); err != nil {
				return err
			}
		case wasiModule:
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
	return checkExports(cm, guestExports)
}

// checkImport requires an imported host function to have the signature the host gives it.
func checkImport(f api.FunctionDefinition, want signature) error {
	if sameSignature(f, want) {
		return nil
	}
	mod, name, _ := f.Import()
	return fmt.Errorf("module imports %s.%s as %s, want %s", mod, name, sigString(f.ParamTypes(), f.ResultTypes()), sigString(want.params, want.results))
}

// checkExports requires every export of want, with its signature, and allows _initialize
// taking and returning nothing.
func checkExports(cm wazero.CompiledModule, want map[string]signature) error {
	exports := cm.ExportedFunctions()
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	slices.Sort(names) // the first missing export named is the same every time
	for _, name := range names {
		f, ok := exports[name]
		if !ok {
			return fmt.Errorf("module does not export %s", name)
		}
		if !sameSignature(f, want[name]) {
			return fmt.Errorf("module exports %s as %s, want %s", name, sigString(f.ParamTypes(), f.ResultTypes()), sigString(want[name].params, want[name].results))
		}
	}
	if f, ok := exports[abi.ExportInitialize]; ok && !sameSignature(f, signature{}) {
		return fmt.Errorf("module exports %s with parameters or results", abi.ExportInitialize)
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

// describe instantiates the module once to read its ABI version and description.
func (r *Runtime) describe(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, m *Module) error {
	ctx, cancel := context.WithTimeout(ctx, describeDeadline)
	defer cancel()
	st := newDescribeState()
	ctx = withState(ctx, st)
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
		return st.describeFailed(err)
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
func (st *state) describeFailed(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s did not return within %v", ErrInvalidModule, abi.ExportDescribe, describeDeadline)
	}
	return fmt.Errorf("%w: %s trapped: %s%s", ErrInvalidModule, abi.ExportDescribe, firstLine(err), st.stderrTail())
}

// describeAs parses and checks the description describe returned, and keeps it.
func (m *Module) describeAs(raw []byte) error {
	var d abi.Description
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("%w: describe returned invalid JSON: %v", ErrInvalidModule, err)
	}
	if err := validateDescription(d); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidModule, err)
	}
	m.Description = d
	return nil
}

func validateDescription(d abi.Description) error {
	if len(d.Workflows) == 0 {
		return errors.New("module declares no workflow")
	}
	seen := map[string]bool{}
	for _, w := range d.Workflows {
		if err := checkName("workflow", w.Name); err != nil {
			return err
		}
		if w.Version == "" || len(w.Version) > abi.MaxNameLen || !utf8.ValidString(w.Version) {
			return fmt.Errorf("workflow %q: version must be 1 to %d bytes of UTF-8", w.Name, abi.MaxNameLen)
		}
		k := w.Name + "\x00" + w.Version
		if seen[k] {
			return fmt.Errorf("workflow %q version %q is declared twice", w.Name, w.Version)
		}
		seen[k] = true
		if w.RetentionDays < 0 {
			return fmt.Errorf("workflow %q: retentionDays must not be negative", w.Name)
		}
		if w.Retry != nil {
			if err := w.Retry.Validate(); err != nil {
				return fmt.Errorf("workflow %q: %v", w.Name, err)
			}
		}
		for _, t := range w.Triggers {
			if err := checkName("trigger event", t); err != nil {
				return fmt.Errorf("workflow %q: %v", w.Name, err)
			}
		}
	}
	return nil
}

// checkName applies ABI.md §4.2 (abi.CheckName).
func checkName(what, name string) error { return abi.CheckName(what, name) }
