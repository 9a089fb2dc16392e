package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wfhost/wfhost/abi"
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
	// CacheDir keeps compiled code across restarts; "" keeps it in memory only.
	CacheDir string
	// MaxModuleBytes bounds what Load accepts; default 32 MiB.
	MaxModuleBytes int
	// MaxIdleInstances bounds the reset instances kept per module and memory limit for the
	// next activations; default 16, negative keeps none (every activation instantiates).
	MaxIdleInstances int
	Logger           *slog.Logger
}

// Runtime compiles modules and runs activations. Safe for concurrent use.
//
// wazero fixes a memory limit per runtime (it is compiled into the module), so a Runtime keeps
// one wazero runtime per distinct page limit, sharing one compilation cache: a module compiled
// for one limit costs a cache lookup, not a compile, for the next.
type Runtime struct {
	cfg   Config
	cache wazero.CompilationCache

	mu       sync.Mutex
	byPages  map[uint32]*pagedRuntime
	modules  map[string]*Module // by digest
	loadings map[string]*loading

	extism extismPlugins // compiled Extism modules (extism.go)
}

type loading struct {
	done chan struct{}
	mod  *Module
	err  error
}

// pagedRuntime is one wazero runtime with its memory limit, WASI and the wfhost host module.
type pagedRuntime struct {
	rt wazero.Runtime

	mu       sync.Mutex
	compiled map[string]*compiledModule // by digest
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

	wasm          []byte
	hasInitialize bool
}

// NewRuntime creates a Runtime.
func NewRuntime(ctx context.Context, cfg Config) (*Runtime, error) {
	cfg.MaxModuleBytes = cmp.Or(cfg.MaxModuleBytes, 32<<20)
	cfg.MaxIdleInstances = cmp.Or(cfg.MaxIdleInstances, 16)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	var cache wazero.CompilationCache
	if cfg.CacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("compilation cache %s: %w", cfg.CacheDir, err)
		}
		cache = c
	} else {
		cache = wazero.NewCompilationCache()
	}
	return &Runtime{
		cfg:      cfg,
		cache:    cache,
		byPages:  make(map[uint32]*pagedRuntime),
		modules:  make(map[string]*Module),
		loadings: make(map[string]*loading),
	}, nil
}

// Close releases every runtime and compiled module.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, p := range r.byPages {
		errs = append(errs, p.rt.Close(ctx))
	}
	r.byPages = map[uint32]*pagedRuntime{}
	errs = append(errs, r.extism.close(ctx))
	errs = append(errs, r.cache.Close(ctx))
	return errors.Join(errs...)
}

// paged returns the wazero runtime for a memory limit, creating it on first use.
func (r *Runtime) paged(ctx context.Context, pages uint32) (*pagedRuntime, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.byPages[pages]; p != nil {
		return p, nil
	}
	rcfg := wazero.NewRuntimeConfigCompiler().
		// Without it a spinning guest ignores its deadline and blocks Go's stop-the-world GC,
		// freezing the whole daemon (reference/feasibility.md §7).
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(pages).
		WithCompilationCache(r.cache)
	rt := wazero.NewRuntimeWithConfig(ctx, rcfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate WASI: %w", err)
	}
	if err := instantiateHostModule(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate wfhost host module: %w", err)
	}
	p := &pagedRuntime{rt: rt, compiled: make(map[string]*compiledModule)}
	r.byPages[pages] = p
	return p, nil
}

// compiledFor returns the module compiled for a memory limit, and how long compiling took
// (zero when it was already compiled).
func (r *Runtime) compiledFor(ctx context.Context, m *Module, pages uint32) (wazero.Runtime, *compiledModule, time.Duration, error) {
	p, err := r.paged(ctx, pages)
	if err != nil {
		return nil, nil, 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.compiled[m.Digest]; c != nil {
		return p.rt, c, 0, nil
	}
	began := time.Now()
	c := &compiledModule{resetPool: resetPool[*instance]{maxIdle: r.cfg.MaxIdleInstances}}
	code := m.wasm
	// A module whose globals cannot all be exported runs on a fresh instance every time.
	if rewritten, names, err := exportGlobals(m.wasm); err == nil && r.cfg.MaxIdleInstances > 0 {
		code, c.globals, c.poolable = rewritten, names, true
	}
	cm, err := p.rt.CompileModule(ctx, code)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%w: compile: %v", ErrInvalidModule, err)
	}
	c.cm = cm
	p.compiled[m.Digest] = c
	return p.rt, c, time.Since(began), nil
}
