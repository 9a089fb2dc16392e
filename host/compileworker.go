package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

// A module is compiled first in a compile worker: this executable started again in a hidden
// mode, with a memory and a CPU-time limit of its own, a lower priority and a
// wall-time limit, killed on timeout, on cancel and when the Runtime closes. wazero keys its
// file cache on the module's bytes, whether listeners are compiled in, WithCloseOnContextDone,
// its own version and the CPU's features (never on the memory limit), so the worker, compiling
// the same bytes with the same settings into the same cache directory, leaves the daemon's own
// CompileModule a cache hit: it then decodes and validates a module the pre-check already
// bounded, and maps the worker's code. A compile that would exhaust memory or run for minutes
// exhausts the worker instead. RATIONALE.md, "Compiling in a worker", has the measurements.

// compileWorkerArgs are the arguments that start the compile worker. The first makes a test
// binary that did not install ServeCompileWorkerIfAsked run no test and exit, so a forgotten
// TestMain fails the compile with a clear error instead of running the tests again.
var compileWorkerArgs = []string{"-test.run=^$", "wfhost-compile-worker"}

// ServeCompileWorkerIfAsked runs the compile worker and exits when this process was started
// as one (by a Runtime, with compileWorkerArgs), and returns at once otherwise. A program
// that creates a Runtime calls it first thing in main; a test package that loads modules calls
// it from TestMain.
func ServeCompileWorkerIfAsked() {
	n := len(compileWorkerArgs)
	if len(os.Args) < 1+n || !slices.Equal(os.Args[1:1+n], compileWorkerArgs) {
		return
	}
	os.Exit(serveCompileWorker(os.Args[1+n:], os.Stdin, os.Stdout))
}

// compileOptions are the settings of one compile that make up wazero's cache key, besides the
// bytes; pages is there because wazero's decoder refuses a module whose minimum memory is
// over the runtime's limit.
type compileOptions struct {
	pages uint32
	// listener compiles findGuestModule's listener in (the Extism door's pooled plug-ins).
	listener bool
}

type workerReply struct {
	OK    bool   `json:"ok,omitempty"`
	Error string `json:"error,omitempty"`
}

// serveCompileWorker is the worker: it limits itself, reads the module from in, compiles it
// into the cache directory and writes one workerReply to out. A compile error is a reply; a
// limit reached kills the process, which the Runtime reports.
func serveCompileWorker(args []string, in io.Reader, out io.Writer) int {
	fs := flag.NewFlagSet("wfhost-compile-worker", flag.ContinueOnError)
	cacheDir := fs.String("cache", "", "compilation cache directory")
	pages := fs.Uint("pages", 0, "memory limit in pages")
	listener := fs.Bool("listener", false, "compile the Extism guest-module listener in")
	dataBytes := fs.Int64("data-bytes", 0, "data (RLIMIT_DATA) limit in bytes")
	cpuSeconds := fs.Int64("cpu-seconds", 0, "CPU-time limit in seconds")
	maxBytes := fs.Int64("max-bytes", 64<<20, "largest module read")
	run := fs.Bool("exec", false, "limit this process, then replace it with the program and arguments that follow the flags")
	if err := fs.Parse(args); err == nil && *run && fs.NArg() > 0 {
		// A program of the host's own choosing (wasm-opt: snapshots.go) run on a tenant's
		// module gets the worker's limits.
		limitWorker(*dataBytes, *cpuSeconds)
		fmt.Fprintln(os.Stderr, "wfhost compile worker: exec:", execProgram(fs.Args()))
		return 2
	}
	if err := fs.Parse(args); err != nil || *cacheDir == "" {
		fmt.Fprintln(os.Stderr, "wfhost compile worker: bad arguments:", args)
		return 2
	}
	limitWorker(*dataBytes, *cpuSeconds)
	reply := func(r workerReply) int {
		_ = json.NewEncoder(out).Encode(r)
		return 0
	}
	code, err := io.ReadAll(io.LimitReader(in, *maxBytes+1))
	if err != nil {
		return reply(workerReply{Error: "read the module: " + err.Error()})
	}
	if int64(len(code)) > *maxBytes {
		return reply(workerReply{Error: fmt.Sprintf("module over %d bytes", *maxBytes)})
	}
	ctx := context.Background()
	if *listener {
		ctx = experimental.WithFunctionListenerFactory(ctx, findGuestModule{})
	}
	cache, err := wazero.NewCompilationCacheWithDir(*cacheDir)
	if err != nil {
		return reply(workerReply{Error: "compilation cache: " + err.Error()})
	}
	rt := wazero.NewRuntimeWithConfig(ctx, runtimeConfig(uint32(*pages), cache))
	_, err = rt.CompileModule(ctx, code)
	_ = rt.Close(ctx)
	_ = cache.Close(ctx)
	if err != nil {
		return reply(workerReply{Error: err.Error()})
	}
	return reply(workerReply{OK: true})
}

// runtimeConfig is the configuration of every wazero runtime that compiles guest code, in the
// daemon and in the worker alike: the same settings give the same cache key.
func runtimeConfig(pages uint32, cache wazero.CompilationCache) wazero.RuntimeConfig {
	return wazero.NewRuntimeConfigCompiler().
		// Without it a spinning guest ignores its deadline and blocks Go's stop-the-world GC,
		// freezing the whole daemon (reference/feasibility.md §7).
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(pages).
		WithCompilationCache(cache)
}

var errCompileTimeout = errors.New("compile wall-time limit reached")

// workerCompile compiles code in a compile worker, after waiting for a compile slot (one per
// tenant, MaxCompiles overall). A nil error means the compiled code is in the cache. An error
// wraps ErrInvalidModule only when the module is at fault: it did not compile, or its compile
// reached a limit; the worker killed by a cancel or a shutdown, or failing to start, is not.
func (r *Runtime) workerCompile(ctx context.Context, tenant string, code []byte, o compileOptions) error {
	leave, err := r.gate.enter(ctx, tenant)
	if err != nil {
		return fmt.Errorf("waiting for a compile slot: %w", err)
	}
	defer leave()
	wctx, cancel := context.WithTimeoutCause(ctx, r.cfg.CompileTimeout, errCompileTimeout)
	defer cancel()
	argv := append(slices.Clone(r.cfg.CompileWorker),
		"-cache", r.cacheDir,
		"-pages", strconv.FormatUint(uint64(o.pages), 10),
		"-data-bytes", strconv.FormatInt(r.cfg.CompileMemoryBytes, 10),
		"-cpu-seconds", strconv.FormatInt(int64(r.cfg.CompileTimeout/time.Second)+1, 10),
		"-max-bytes", strconv.Itoa(2*r.cfg.MaxModuleBytes))
	if o.listener {
		argv = append(argv, "-listener")
	}
	cmd := exec.CommandContext(wctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(code)
	stdout, stderr := &cappedBuffer{max: 64 << 10}, &cappedBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// The worker needs nothing from the daemon's environment (which may hold credentials).
	cmd.Env = []string{}
	cmd.WaitDelay = 2 * time.Second
	workerProcAttr(cmd)
	runErr := cmd.Run()
	switch {
	case errors.Is(context.Cause(wctx), errCompileTimeout):
		return fmt.Errorf("%w: compile: did not finish within %v", ErrInvalidModule, r.cfg.CompileTimeout)
	case ctx.Err() != nil:
		return fmt.Errorf("compile stopped: %w", context.Cause(ctx))
	}
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return fmt.Errorf("start the compile worker %s: %w", argv[0], runErr)
	}
	if exit != nil {
		return fmt.Errorf("%w: compile: %s", ErrInvalidModule, workerDeath(exit, stderr.String(), r.cfg))
	}
	var reply workerReply
	if err := json.Unmarshal(stdout.Bytes(), &reply); err != nil || !reply.OK && reply.Error == "" {
		return fmt.Errorf("the compile worker %s gave no answer (a test binary must call host.ServeCompileWorkerIfAsked from TestMain): %q", argv[0], firstLines(stdout.String()+stderr.String(), 2))
	}
	if !reply.OK {
		return fmt.Errorf("%w: compile: %s", ErrInvalidModule, reply.Error)
	}
	return nil
}

// workerDeath says why a compile worker that was not killed by the Runtime died: a limit it
// reached, or the runtime error it printed.
func workerDeath(exit *exec.ExitError, stderr string, cfg Config) string {
	if sig, ok := exitSignal(exit); ok {
		return fmt.Sprintf("the compile worker was killed by %s (limits: %d MiB of memory, %v of CPU)", sig, cfg.CompileMemoryBytes>>20, cfg.CompileTimeout)
	}
	// Go's runtime, or the race detector's under -race, when an allocation hits the limit.
	for _, oom := range []string{"out of memory", "cannot allocate memory", "failed to allocate"} {
		if i := strings.Index(stderr, oom); i >= 0 {
			line := stderr[strings.LastIndexByte(stderr[:i], '\n')+1:]
			return fmt.Sprintf("the compile needed more than its %d MiB of memory (%s)", cfg.CompileMemoryBytes>>20, firstLines(line, 1))
		}
	}
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "fatal error:") || strings.HasPrefix(line, "panic:") {
			return "the compile worker died: " + line
		}
	}
	return fmt.Sprintf("the compile worker exited with %v: %s", exit, firstLines(stderr, 2))
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " / ")
}

// cappedBuffer keeps the first max bytes written to it and drops the rest.
type cappedBuffer struct {
	max int
	bytes.Buffer
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// compileGate bounds the compiles under way: MaxCompiles overall, and one per tenant, so a
// tenant's slow uploads queue behind each other and take at most one slot from the others.
// Callers without a tenant ("") are bounded only overall. Safe for concurrent use.
type compileGate struct {
	slots chan struct{}

	mu      sync.Mutex
	tenants map[string]*tenantSlot
}

type tenantSlot struct {
	held  chan struct{}
	users int
}

func newCompileGate(n int) *compileGate {
	return &compileGate{slots: make(chan struct{}, n), tenants: make(map[string]*tenantSlot)}
}

// enter waits for the tenant's slot and an overall one, and returns what frees them.
func (g *compileGate) enter(ctx context.Context, tenant string) (leave func(), err error) {
	var s *tenantSlot
	if tenant != "" {
		g.mu.Lock()
		if s = g.tenants[tenant]; s == nil {
			s = &tenantSlot{held: make(chan struct{}, 1)}
			g.tenants[tenant] = s
		}
		s.users++
		g.mu.Unlock()
	}
	done := func() {
		if s == nil {
			return
		}
		g.mu.Lock()
		if s.users--; s.users == 0 {
			delete(g.tenants, tenant)
		}
		g.mu.Unlock()
	}
	if s != nil {
		select {
		case s.held <- struct{}{}:
		case <-ctx.Done():
			done()
			return nil, context.Cause(ctx)
		}
	}
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		if s != nil {
			<-s.held
		}
		done()
		return nil, context.Cause(ctx)
	}
	return func() {
		<-g.slots
		if s != nil {
			<-s.held
		}
		done()
	}, nil
}
