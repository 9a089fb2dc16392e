package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/internal/shares"
)

// ErrInvalidModule is wrapped by every Load error that is the module's fault.
var ErrInvalidModule = errors.New("invalid module")

// GuestError is how Activate reports a pass the guest ended badly: a trap, the deadline, an
// ABI violation, an oversized payload, no result, an unknown workflow. Its Info is what the
// run's error becomes.
type GuestError struct{ Info abi.ErrorInfo }

func (e *GuestError) Error() string { return e.Info.Error() }

func guestError(code, format string, args ...any) *GuestError {
	return &GuestError{Info: abi.ErrorInfo{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// Config configures a Runtime.
type Config struct {
	// CacheDir keeps compiled code across restarts; "" keeps it in a private temporary
	// directory removed by Close (the compile worker and the daemon share compiled code through
	// it: see compileworker.go).
	CacheDir string
	// MaxModuleBytes bounds what Load accepts; default 32 MiB.
	MaxModuleBytes int
	// Bounds are the structural bounds every module is checked against before wazero reads it
	// (wasmcheck.go); zero fields take DefaultModuleBounds.
	Bounds ModuleBounds
	// MaxIdleInstances bounds the reset instances kept per module and memory limit for the
	// next activations; default 16, negative keeps none (every activation instantiates).
	MaxIdleInstances int
	// TenantCores bounds the cores one tenant's guest code occupies at once (activations and
	// the describe of its uploads) while another tenant is about; default every core but one
	// (GOMAXPROCS-1, at least 1), so that a tenant whose guests compute without pause leaves a
	// core to the others. A tenant alone is not bounded (cores.go).
	TenantCores int
	// MaxCompiles bounds the compile workers running at once; default the number of CPUs, at
	// least 2. One tenant has at most one at a time, so its uploads queue behind each other.
	MaxCompiles int
	// CompileTimeout bounds one module's compile, in the worker; default 2 minutes (16 in a
	// -race build, whose compiler runs instrumented). A module that takes longer is invalid.
	CompileTimeout time.Duration
	// CompileMemoryBytes bounds the compile worker's memory (its heap and mappings, as
	// RLIMIT_DATA); default 1 GiB, five times what the largest fixture's compile needs (8 GiB
	// in a -race build, for the race detector's shadow memory). A module whose compile needs
	// more is invalid.
	CompileMemoryBytes int64
	// DescribeTimeout bounds the calls a load makes into a module (_initialize,
	// wfhost_abi_version, wfhost_describe): a hostile module must not hold an upload for long.
	// Default 5 s; a module that takes longer is invalid.
	DescribeTimeout time.Duration
	// CompileWorker is the command that runs a compile worker; default this executable with
	// the arguments ServeCompileWorkerIfAsked recognises.
	CompileWorker []string
	// Snapshots turns durable snapshots on (snapshots.go); the zero value leaves them off.
	Snapshots SnapshotConfig
	Logger    *slog.Logger
}

// Runtime compiles modules and runs activations. Safe for concurrent use.
//
// wazero fixes a memory limit per runtime (it is compiled into the module), so a Runtime keeps
// one wazero runtime per distinct page limit, sharing one compilation cache: a module compiled
// for one limit costs a cache lookup, not a compile, for the next.
//
// No lock is held across a compile: mu guards only the maps, each compile and each load has
// an entry of its own with a channel closed when it is ready, and the work itself runs under
// a context of the Runtime's, detached from the callers that wait for it (load.go).
type Runtime struct {
	cfg      Config
	cache    wazero.CompilationCache
	cacheDir string
	tempDir  string // the private cache directory Close removes, if CacheDir was ""
	gate     *compileGate
	cores    *shares.Pool // each tenant's cores for guest code (cores.go)
	// life is cancelled by Close: it ends every load, compile and compile worker.
	life     context.Context
	stop     context.CancelFunc
	loadsRun sync.WaitGroup

	mu       sync.Mutex
	byPages  map[uint32]*pagedRuntime
	modules  map[string]*Module // by digest
	loadings map[string]*loading

	extism extismPlugins // compiled Extism modules (extism.go)

	// transformOnce asks wasm-opt its version once (snapshots.go).
	transformOnce sync.Once
	transformKey  string
	transformErr  error
}

// pagedRuntime is one wazero runtime with its memory limit, WASI and the wfhost host module.
type pagedRuntime struct {
	rt    wazero.Runtime
	pages uint32

	mu       sync.Mutex
	compiled map[string]*compileEntry // by digest
}

// compileEntry is one module's compile for one memory limit, shared by the callers that need
// it (shared): c or err is set when done is closed. A compiled entry stays listed; a failed
// or abandoned one is unlisted, for the next caller to try again.
type compileEntry struct {
	shared
	c    *compiledModule
	took time.Duration
	err  error
}

// Module is a validated, compiled module. Safe for concurrent use.
type Module struct {
	Digest      string
	Size        int
	ABIVersion  int
	Description abi.Description
	// CompileTime is how long Load spent compiling the module (zero if it was compiled before).
	CompileTime time.Duration
	// Extism is true for a module built with an Extism PDK (it imports extism:host/env): it
	// runs through go-sdk with the verbs as Extism host functions (ABI.md, "Extism modules").
	Extism bool

	// MinMemoryPages is the module's declared minimum memory: an activation whose memory
	// limit is below it can never run (Activate fails it with abi.CodeMemoryLimit).
	MinMemoryPages uint32

	wasm          []byte
	hasInitialize bool
	// code is what is compiled: wasm, or wasm transformed for snapshots (snapshots is then
	// set), whose sha256 is codeDigest.
	code       []byte
	snapshots  bool
	codeDigest string
}

// NewRuntime creates a Runtime.
func NewRuntime(ctx context.Context, cfg Config) (*Runtime, error) {
	cfg.MaxModuleBytes = cmp.Or(cfg.MaxModuleBytes, 32<<20)
	cfg.MaxIdleInstances = cmp.Or(cfg.MaxIdleInstances, 16)
	cfg.MaxCompiles = cmp.Or(cfg.MaxCompiles, max(2, runtime.NumCPU()))
	cfg.TenantCores = cmp.Or(cfg.TenantCores, defaultTenantCores())
	if cfg.TenantCores < 0 {
		return nil, fmt.Errorf("host config: TenantCores must be at least 1, not %d", cfg.TenantCores)
	}
	cfg.CompileTimeout = cmp.Or(cfg.CompileTimeout, compileHeadroom*2*time.Minute)
	cfg.DescribeTimeout = cmp.Or(cfg.DescribeTimeout, 5*time.Second)
	cfg.CompileMemoryBytes = cmp.Or(cfg.CompileMemoryBytes, compileHeadroom<<30)
	cfg.Bounds = cfg.Bounds.withDefaults()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if len(cfg.CompileWorker) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find this executable for the compile worker: %w", err)
		}
		cfg.CompileWorker = append([]string{exe}, compileWorkerArgs...)
	}
	r := &Runtime{
		cfg:      cfg,
		cacheDir: cfg.CacheDir,
		gate:     newCompileGate(cfg.MaxCompiles),
		cores:    newCoreShares(cfg.TenantCores),
		byPages:  make(map[uint32]*pagedRuntime),
		modules:  make(map[string]*Module),
		loadings: make(map[string]*loading),
	}
	if r.cacheDir == "" {
		// The compile worker hands its work over through a file cache, so there always is one.
		dir, err := os.MkdirTemp("", "wfhost-compile-cache-")
		if err != nil {
			return nil, fmt.Errorf("compilation cache: %w", err)
		}
		r.cacheDir, r.tempDir = dir, dir
	}
	cache, err := wazero.NewCompilationCacheWithDir(r.cacheDir)
	if err != nil {
		return nil, fmt.Errorf("compilation cache %s: %w", r.cacheDir, err)
	}
	r.cache = cache
	r.life, r.stop = context.WithCancel(context.WithoutCancel(ctx))
	return r, nil
}

// Close ends every load and compile worker under way and releases every runtime and compiled
// module.
func (r *Runtime) Close(ctx context.Context) error {
	r.stop()
	r.loadsRun.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, p := range r.byPages {
		errs = append(errs, p.rt.Close(ctx))
	}
	r.byPages = map[uint32]*pagedRuntime{}
	errs = append(errs, r.extism.close(ctx))
	errs = append(errs, r.cache.Close(ctx))
	if r.tempDir != "" {
		errs = append(errs, os.RemoveAll(r.tempDir))
	}
	return errors.Join(errs...)
}

// paged returns the wazero runtime for a memory limit, creating it on first use.
func (r *Runtime) paged(ctx context.Context, pages uint32) (*pagedRuntime, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.byPages[pages]; p != nil {
		return p, nil
	}
	// The runtime outlives the call that made it.
	ctx = context.WithoutCancel(ctx)
	rt := wazero.NewRuntimeWithConfig(ctx, runtimeConfig(pages, r.cache))
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate WASI: %w", err)
	}
	if err := instantiateHostModule(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate wfhost host module: %w", err)
	}
	p := &pagedRuntime{rt: rt, pages: pages, compiled: make(map[string]*compileEntry)}
	r.byPages[pages] = p
	return p, nil
}

// compiledFor returns the module compiled for a memory limit, and how long compiling took
// (zero when it was already compiled). The compile is shared by every caller that needs it
// and runs detached from all of them, each of which can stop waiting on its own context;
// a caller of an already compiled module never waits.
func (r *Runtime) compiledFor(ctx context.Context, tenant string, m *Module, pages uint32) (wazero.Runtime, *compiledModule, time.Duration, error) {
	if m.MinMemoryPages > pages {
		return nil, nil, 0, memoryLimitError(m, pages)
	}
	p, err := r.paged(ctx, pages)
	if err != nil {
		return nil, nil, 0, err
	}
	p.mu.Lock()
	e := p.compiled[m.Digest]
	mine := e == nil
	if mine {
		sh, cctx := newShared(r.life, r.cfg.CompileTimeout+loadTimeout)
		e = &compileEntry{shared: sh}
		p.compiled[m.Digest] = e
		r.loadsRun.Add(1)
		go func() {
			defer r.loadsRun.Done()
			c, took, err := r.compileNative(cctx, tenant, p, m)
			p.mu.Lock()
			e.c, e.took, e.err = c, took, err
			listed := p.compiled[m.Digest] == e
			if err != nil && listed {
				// Not kept: the next caller tries again.
				delete(p.compiled, m.Digest)
			}
			p.mu.Unlock()
			if err == nil && !listed {
				// Abandoned by every caller as it finished: nobody holds it.
				_ = c.cm.Close(context.Background())
			}
			e.finish()
		}()
	}
	e.join()
	p.mu.Unlock()
	if err := e.wait(ctx, &p.mu, func() {
		if p.compiled[m.Digest] == e {
			delete(p.compiled, m.Digest)
		}
	}); err != nil {
		return nil, nil, 0, fmt.Errorf("waiting for the module's compile: %w", err)
	}
	if e.err != nil {
		return nil, nil, 0, e.err
	}
	took := time.Duration(0)
	if mine {
		took = e.took
	}
	return p.rt, e.c, took, nil
}

// compileNative compiles a native module for one wazero runtime: in a compile worker first
// (bounded, and killable), then here, where wazero finds the worker's code in the cache.
func (r *Runtime) compileNative(ctx context.Context, tenant string, p *pagedRuntime, m *Module) (*compiledModule, time.Duration, error) {
	began := time.Now()
	c := &compiledModule{resetPool: resetPool[*instance]{maxIdle: r.cfg.MaxIdleInstances}}
	code := m.code
	// A module whose globals cannot all be exported runs on a fresh instance every time; a
	// snapshot needs them exported too (and the initial image the pool keeps).
	if rewritten, names, err := exportGlobals(m.code); err == nil && (r.cfg.MaxIdleInstances > 0 || m.snapshots) {
		code, c.globals, c.poolable = rewritten, names, true
	}
	if err := r.workerCompile(ctx, tenant, code, compileOptions{pages: p.pages}); err != nil {
		return nil, 0, err
	}
	cm, err := p.rt.CompileModule(ctx, code)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, fmt.Errorf("compile stopped: %w", context.Cause(ctx))
		}
		return nil, 0, fmt.Errorf("%w: compile: %v", ErrInvalidModule, err)
	}
	c.cm = cm
	return c, time.Since(began), nil
}

// memoryLimitError is the failure of an activation whose memory limit is below the module's
// declared minimum: no retry can help, so the run fails with its own code.
func memoryLimitError(m *Module, pages uint32) *GuestError {
	return guestError(abi.CodeMemoryLimit, "the module needs at least %d pages (%d MiB) of memory; the limit is %d pages (%d MiB)",
		m.MinMemoryPages, uint64(m.MinMemoryPages)*65536>>20, pages, uint64(pages)*65536>>20)
}
