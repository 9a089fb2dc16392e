package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/wfhost/wfhost/abi"
)

// The Extism door: a module built with an Extism PDK (it imports ExtismEnvModule) is compiled
// and instantiated by extism/go-sdk, and its workflow verbs are the host functions of
// extism_funcs.go. It shares the engine, the Handler, the state machine of verbs.go and the
// outbound policy with native modules; only the transport and the instance life differ
// (RATIONALE.md, "The Extism door"; ABI.md, "Extism modules").

const (
	// ExtismEnvModule is the import module of Extism's kernel; importing it makes a module an
	// Extism module.
	ExtismEnvModule = "extism:host/env"
	// ExtismUserModule is the import module of the workflow verbs for Extism modules (Extism's
	// default namespace for host functions).
	ExtismUserModule = "extism:host/user"
	// ExtismConfigWorkflow is the Extism config key that names the workflow wfhost_run runs.
	ExtismConfigWorkflow = "wfhost.workflow"
)

// isExtismModule reports whether wasm imports anything from ExtismEnvModule. A module whose
// import section cannot be read is not one; compiling it will say what is wrong.
func isExtismModule(wasm []byte) bool {
	secs, err := sections(wasm)
	if err != nil {
		return false
	}
	for _, sec := range secs {
		if sec.id != sectionImport {
			continue
		}
		entries, _, err := importEntries(wasm[sec.start:sec.end])
		if err != nil {
			return false
		}
		for _, e := range entries {
			if e.module == ExtismEnvModule {
				return true
			}
		}
	}
	return false
}

// extismPlugins are the compiled Extism plugins, one per module digest and memory limit: a
// go-sdk CompiledPlugin owns its own wazero runtime, and wazero fixes the memory limit per
// runtime. They share the Runtime's compilation cache. Safe for concurrent use.
type extismPlugins struct {
	mu     sync.Mutex
	byKey  map[extismKey]*extismPlugin
	closed bool
}

type extismKey struct {
	digest string
	pages  uint32
}

// extismFor returns the module compiled for a memory limit, and how long compiling took (zero
// when it was compiled before). As compiledFor does, it shares the compile among its callers
// and runs it detached from all of them, each waiting on its own context.
func (r *Runtime) extismFor(ctx context.Context, tenant string, m *Module, pages uint32) (*extismPlugin, time.Duration, error) {
	if m.MinMemoryPages > pages {
		return nil, 0, memoryLimitError(m, pages)
	}
	e := &r.extism
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, 0, errors.New("runtime closed")
	}
	if e.byKey == nil {
		e.byKey = make(map[extismKey]*extismPlugin)
	}
	k := extismKey{m.Digest, pages}
	p := e.byKey[k]
	mine := p == nil
	if mine {
		sh, cctx := newShared(r.life, r.cfg.CompileTimeout+loadTimeout)
		p = &extismPlugin{shared: sh, resetPool: resetPool[*extismInstance]{maxIdle: r.cfg.MaxIdleInstances}}
		e.byKey[k] = p
		r.loadsRun.Add(1)
		go func() {
			defer r.loadsRun.Done()
			began := time.Now()
			err := r.compileExtism(cctx, tenant, m, p, pages)
			e.mu.Lock()
			p.err, p.took = err, time.Since(began)
			listed := e.byKey[k] == p
			if err != nil && listed {
				// Not kept: the next activation tries again.
				delete(e.byKey, k)
			}
			e.mu.Unlock()
			if err == nil && !listed {
				// Abandoned by every caller as it finished: nobody holds it.
				_ = p.cp.Close(context.Background())
			}
			p.finish()
		}()
	}
	p.join()
	e.mu.Unlock()
	if err := p.wait(ctx, &e.mu, func() {
		if e.byKey[k] == p {
			delete(e.byKey, k)
		}
	}); err != nil {
		return nil, 0, fmt.Errorf("waiting for the module's compile: %w", err)
	}
	if p.err != nil {
		return nil, 0, p.err
	}
	took := time.Duration(0)
	if mine {
		took = p.took
	}
	return p, took, nil
}

// compileExtism compiles an Extism module into p through go-sdk, after a compile worker has
// compiled the same bytes with the same settings into the cache.
func (r *Runtime) compileExtism(ctx context.Context, tenant string, m *Module, p *extismPlugin, pages uint32) error {
	// Extism's own HTTP is served by extism_http.go, under the tenant's policy: the compiled
	// form imports it from extismHTTPModule. The module's digest stays that of the uploaded
	// bytes.
	code, err := redirectExtismHTTP(m.wasm)
	if err != nil {
		return fmt.Errorf("%w: moving Extism's HTTP imports: %v", ErrInvalidModule, err)
	}
	cctx, opts := ctx, compileOptions{pages: pages}
	// As for native modules (compiledFor), instances are reused if every mutable global can
	// be exported; the listener finds the guest's module for the reset (extism_pool.go).
	if rewritten, names, err := exportGlobals(code); err == nil && r.cfg.MaxIdleInstances > 0 {
		code, p.globals, p.poolable = rewritten, names, true
		cctx = experimental.WithFunctionListenerFactory(cctx, findGuestModule{})
		opts.listener = true
	}
	if err := r.workerCompile(ctx, tenant, code, opts); err != nil {
		return err
	}
	p.cp, err = extism.NewCompiledPlugin(cctx, extism.Manifest{
		Wasm: []extism.Wasm{extism.WasmData{Data: code}},
		Memory: &extism.ManifestMemory{
			MaxPages: pages,
			// Extism vars would outlive a pass in a reused plug-in and are not journaled: 0
			// disables them (var_set traps).
			MaxVarBytes: 0,
		},
		// No AllowedHosts: go-sdk's own http_request (a hostname glob, http.DefaultClient) is
		// never called, since the compiled module imports extism_http.go's instead; were it
		// called, it would refuse.
		AllowedHosts: nil,
	}, extism.PluginConfig{
		RuntimeConfig: runtimeConfig(pages, r.cache),
		EnableWasi:    true,
	}, extismHostFunctions())
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("compile stopped: %w", context.Cause(ctx))
		}
		return fmt.Errorf("%w: compile: %v", ErrInvalidModule, err)
	}
	return nil
}

// forget drops the compiled plugins of a digest.
func (e *extismPlugins) forget(ctx context.Context, digest string) {
	e.mu.Lock()
	var drop []*extismPlugin
	for k, p := range e.byKey {
		if k.digest == digest {
			drop = append(drop, p)
			delete(e.byKey, k)
		}
	}
	e.mu.Unlock()
	for _, p := range drop {
		<-p.done
		p.closeIdle(ctx)
		if p.cp != nil {
			_ = p.cp.Close(ctx)
		}
	}
}

func (e *extismPlugins) close(ctx context.Context) error {
	e.mu.Lock()
	all := e.byKey
	e.byKey, e.closed = nil, true
	e.mu.Unlock()
	var errs []error
	for _, p := range all {
		<-p.done
		p.closeIdle(ctx)
		if p.cp != nil {
			errs = append(errs, p.cp.Close(ctx))
		}
	}
	return errors.Join(errs...)
}

// loadExtism validates an Extism module, compiles it through go-sdk and reads its description.
func (r *Runtime) loadExtism(ctx context.Context, tenant string, m *Module) (*Module, error) {
	pages := max(DefaultLimits().MemoryPages, m.MinMemoryPages)
	// go-sdk hides the compiled module's imports and exports, so its shape is read from a
	// compile of our own, dropped once read: a second compile per new module (go-sdk's has the
	// listener and the exported globals), and a cache hit after a restart with CacheDir.
	paged, err := r.paged(ctx, pages)
	if err != nil {
		return nil, err
	}
	if err := r.workerCompile(ctx, tenant, m.wasm, compileOptions{pages: pages}); err != nil {
		return nil, err
	}
	cm, err := paged.rt.CompileModule(ctx, m.wasm)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("compile stopped: %w", context.Cause(ctx))
		}
		return nil, fmt.Errorf("%w: compile: %v", ErrInvalidModule, err)
	}
	shapeErr := checkExtismShape(cm)
	_ = cm.Close(ctx)
	if shapeErr != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidModule, shapeErr)
	}
	p, took, err := r.extismFor(ctx, tenant, m, pages)
	m.CompileTime = took
	if err != nil {
		r.extism.forget(ctx, m.Digest)
		return nil, err
	}
	if err := r.describeExtism(ctx, tenant, p.cp, m); err != nil {
		r.extism.forget(ctx, m.Digest)
		return nil, err
	}
	return m, nil
}

// checkExtismShape compares an Extism module's imports and exports with ABI.md, "Extism
// modules".
func checkExtismShape(cm wazero.CompiledModule) error {
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		switch mod {
		case ExtismUserModule:
			want, ok := extismImports[name]
			if !ok {
				return fmt.Errorf("module imports %s.%s, which wfhost does not provide", mod, name)
			}
			if err := checkImport(f, want); err != nil {
				return err
			}
		case ExtismEnvModule:
			// The kernel checks its own imports when the plug-in is instantiated, except for
			// the HTTP functions the compiled form imports from extism_http.go instead.
			if want, ok := extismHTTPImports[name]; ok {
				if err := checkImport(f, want); err != nil {
					return err
				}
			}
		case wasiModule:
			// WASI checks its own imports when the plug-in is instantiated.
		default:
			return fmt.Errorf("module imports %s.%s; an Extism module may import only %q, %q and %q", mod, name, ExtismEnvModule, ExtismUserModule, wasiModule)
		}
	}
	for _, mem := range cm.ImportedMemories() {
		mod, name, _ := mem.Import()
		return fmt.Errorf("module imports memory %s.%s; it must define its own", mod, name)
	}
	return checkExports(cm, abi.ExtismExports)
}

// describeExtism instantiates the plug-in once to read its ABI version and description.
func (r *Runtime) describeExtism(ctx context.Context, tenant string, cp *extism.CompiledPlugin, m *Module) error {
	return r.describeOnCore(ctx, tenant, func(ctx context.Context, st *state) error {
		return r.describeExtismIn(ctx, st, cp, m)
	})
}

// describeExtismIn is describeExtism's calls; ctx carries st.
func (r *Runtime) describeExtismIn(ctx context.Context, st *state, cp *extism.CompiledPlugin, m *Module) error {
	plug, err := cp.Instance(ctx, extism.PluginInstanceConfig{ModuleConfig: st.moduleConfig()})
	if err != nil {
		return fmt.Errorf("%w: instantiate: %s%s", ErrInvalidModule, firstLine(err), st.stderrTail())
	}
	defer plug.Close(context.WithoutCancel(ctx))
	plug.SetLogger(func(extism.LogLevel, string) {})
	version, _, err := plug.CallWithContext(ctx, abi.ExportABIVersion, nil)
	if err != nil {
		return fmt.Errorf("%w: %s trapped: %s%s", ErrInvalidModule, abi.ExportABIVersion, firstLine(err), st.stderrTail())
	}
	m.ABIVersion = int(int32(version))
	if m.ABIVersion != abi.Version {
		return fmt.Errorf("%w: module speaks ABI version %d; this host speaks %d", ErrInvalidModule, m.ABIVersion, abi.Version)
	}
	_, raw, err := plug.CallWithContext(ctx, abi.ExportDescribe, nil)
	if err != nil {
		return st.describeFailed(ctx, err, r.cfg.DescribeTimeout)
	}
	if len(raw) > maxDescribeBytes {
		return fmt.Errorf("%w: description is %d bytes, the limit is %d", ErrInvalidModule, len(raw), maxDescribeBytes)
	}
	return m.describeAs(raw)
}

// activateExtism is Activate for an Extism module: an instance of the plug-in in its
// post-initialisation state (extism_pool.go), then wfhost_run with the run's input as the
// Extism input and the workflow's name in the config.
func (r *Runtime) activateExtism(ctx context.Context, m *Module, a Activation, stats *Stats) (res Result, err error) {
	p, compile, err := r.extismFor(ctx, a.Tenant, m, a.Limits.MemoryPages)
	stats.Compile = compile
	if err != nil {
		return Result{}, err
	}
	st := newActivationState(a)
	gctx, end, err := r.onCoreWithin(ctx, st, a.Tenant, a.Limits.WallTime, errWallTime)
	if err != nil {
		return Result{}, fmt.Errorf("activation %w", err)
	}
	defer end()
	gctx = withExtismHTTP(gctx)

	inst, made, terr := p.take(gctx, st)
	if terr != nil {
		return Result{}, terr.st.classify(ctx, gctx, terr.stage, terr.err)
	}
	stats.Instantiate = made
	st.memoryBytes = func() uint64 { return memorySize(inst.mod) }
	defer func() {
		st.core.give() // as natively (Activate)
		if hasMemory(inst.mod) {
			stats.MemoryBytes = uint64(inst.mod.Memory().Size())
		}
		var ge *GuestError
		inst.faulted = errors.As(err, &ge) || st.interrupted // as natively (Activate)
		stats.Discarded = p.release(context.WithoutCancel(ctx), gctx, inst)
	}()
	inst.plug.SetLogger(func(level extism.LogLevel, msg string) { st.extismLog(gctx, level, msg) })
	inst.plug.Config = map[string]string{ExtismConfigWorkflow: a.Workflow}
	_, _, err = inst.plug.CallWithContext(gctx, abi.ExportRun, a.Input)
	return st.passEnded(ctx, gctx, err)
}

// extismLog receives Extism's own log_* calls, which go-sdk passes on only at or above its
// process-wide level (off unless the operator's program sets it).
func (st *state) extismLog(ctx context.Context, level extism.LogLevel, msg string) {
	lvl := slog.LevelInfo
	switch level {
	case extism.LogLevelTrace, extism.LogLevelDebug:
		lvl = slog.LevelDebug
	case extism.LogLevelWarn:
		lvl = slog.LevelWarn
	case extism.LogLevelError:
		lvl = slog.LevelError
	}
	// Cut as the log verb does: after the redaction, which sees as far past the cut as a
	// secret can reach.
	st.logger.Log(ctx, lvl, st.storableText([]byte(msg[:min(len(msg), keptLineBytes)]), maxLogBytes), st.logAttrs()...)
}
