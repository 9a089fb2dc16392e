package host

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host/snapshot"
)

// compiledModule is a module compiled for one memory limit, with the idle instances kept for
// reuse.
//
// Instantiating a standard Go guest costs milliseconds (its runtime initialises and its data
// segments are copied into a fresh memory); resetting a used instance costs one copy of its
// memory. So every instance starts from one snapshot, taken once per compiled module right
// after the guest's initialisation: its linear memory and its mutable globals (which
// exportGlobals made reachable). An activation takes an idle instance or makes one, and when
// it ends the instance is put back to the snapshot and kept, unless it was closed (deadline,
// cancel), its memory grew (the snapshot could no longer describe it) or enough are idle.
//
// The guest's initialisation therefore runs with a fixed clock and a fixed random seed, not
// the run's: Go's runtime seeds math/rand and map order there, so those are the same for every
// run of a module (and, as before, the same on every replay); crypto/rand and the clock read
// during the workflow still come from the run's own deterministic stream.
type compiledModule struct {
	cm wazero.CompiledModule
	resetPool[*instance]
	// code names the code and initial memory for checkpoints (snapshotCode); guarded by mu.
	code string
}

// resetPool keeps the idle instances of one compiled module, each put back to one snapshot
// of linear memory and mutable globals taken right after the first instance's
// initialisation. Native modules (compiledModule) and Extism plug-ins (extismPlugin) share
// it; only how an instance is made and closed differs. Safe for concurrent use.
type resetPool[T any] struct {
	maxIdle int

	mu       sync.Mutex
	poolable bool     // instances can be reset: every mutable global is exported
	globals  []string // the exported mutable globals
	idle     []T
	snap     *resetImage
}

// resetImage is an instance's state right after its initialisation: what every instance of the
// pool is put back to, and the base a snapshot's image is encoded against (snapshots.go).
type resetImage struct {
	memory  []byte
	globals []uint64
}

// instance is one instantiated module whose clock, random source and output go to whatever
// activation currently holds it.
type instance struct {
	mod      api.Module
	io       *instanceIO
	globals  []api.MutableGlobal
	poolable bool
	// faulted is set when the activation holding the instance ended in a guest fault: such an
	// instance is closed rather than kept.
	faulted bool
	// alloc and run are the guest's exports, looked up once per instance: wazero builds a new
	// call engine on every ExportedFunction, which was a quarter of a small guest's activation.
	alloc, run api.Function
	// guest is the instance's asyncify exports and globals, for a module transformed for
	// snapshots (snapshots.go); nil otherwise.
	guest *snapshot.Guest
}

// instanceIO is the indirection between an instance's WASI configuration, fixed when it is
// instantiated, and the state of the activation using it now.
type instanceIO struct{ st *state }

func (io *instanceIO) config() wazero.ModuleConfig {
	return wazero.NewModuleConfig().
		WithName("").
		// _initialize is called explicitly, so a trap in it is reported like any other.
		WithStartFunctions().
		WithStdout(ioWriter{io, false}).
		WithStderr(ioWriter{io, true}).
		WithWalltime(func() (int64, int32) { return io.st.walltime() }, sys.ClockResolution(1000)).
		WithNanotime(func() int64 { return io.st.nanotime() }, sys.ClockResolution(1000)).
		WithRandSource(ioRand{io}).
		WithNanosleep(func(ns int64) { io.st.nanosleep(ns) })
}

type ioWriter struct {
	io     *instanceIO
	stderr bool
}

func (w ioWriter) Write(p []byte) (int, error) {
	if w.stderr {
		return w.io.st.stderr.Write(p)
	}
	return w.io.st.stdout.Write(p)
}

type ioRand struct{ io *instanceIO }

func (r ioRand) Read(p []byte) (int, error) { return randSource{r.io.st}.Read(p) }

var (
	_ io.Writer = ioWriter{}
	_ io.Reader = ioRand{}
)

// take returns an instance in the snapshot's state, holding st, and how long making it took
// (zero for an idle one). A failure names the stage it happened in, for the error; the state
// that saw the guest's output then is returned with it.
func (c *compiledModule) take(ctx context.Context, rt wazero.Runtime, m *Module, st *state) (*instance, time.Duration, *takeError) {
	if inst, ok := c.takeIdle(); ok {
		inst.io.st = st
		return inst, 0, nil
	}

	began := time.Now()
	inst := &instance{io: &instanceIO{st: newInitState(st)}}
	mod, err := rt.InstantiateModule(ctx, c.cm, inst.io.config())
	if err != nil {
		return nil, 0, &takeError{"instantiate", inst.io.st, err}
	}
	inst.mod = mod
	inst.alloc, inst.run = mod.ExportedFunction(abi.ExportAlloc), mod.ExportedFunction(abi.ExportRun)
	if m.hasInitialize {
		if _, err := mod.ExportedFunction(abi.ExportInitialize).Call(ctx); err != nil {
			_ = mod.Close(context.WithoutCancel(ctx))
			return nil, 0, &takeError{abi.ExportInitialize, inst.io.st, err}
		}
	}
	c.adopt(inst)
	if m.snapshots && inst.poolable {
		c.mu.Lock()
		names := c.globals
		c.mu.Unlock()
		if g, err := snapshot.NewGuest(mod, names); err == nil {
			// Go's and TinyGo's allocators assume they own every page up to the end of memory,
			// so the unwind buffer is grown only when a checkpoint needs it (snapshot.Guest).
			g.TransientBuffer(0)
			inst.guest = g
		}
	}
	inst.io.st = st
	return inst, time.Since(began), nil
}

// takeError is a failure to make an instance: the stage, the state the guest wrote to, and
// the error.
type takeError struct {
	stage string
	st    *state
	err   error
}

// release puts the instance back to the snapshot and keeps it, or closes it and says why
// (keep's reasons).
func (c *compiledModule) release(ctx context.Context, inst *instance) (discarded string) {
	inst.io.st = nil
	if discarded = c.keep(inst, inst); discarded != "" {
		_ = inst.mod.Close(ctx)
	}
	return discarded
}

// takeIdle takes an idle instance, if there is one.
func (p *resetPool[T]) takeIdle() (T, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var none T
	n := len(p.idle)
	if n == 0 {
		return none, false
	}
	t := p.idle[n-1]
	p.idle = p.idle[:n-1]
	return t, true
}

// adopt readies a newly made and initialised instance: it finds its exported mutable globals,
// takes the pool's snapshot from the first one, and puts this one into the snapshot's state.
// Initialisation is deterministic (fixed clock and seed), but every instance is put into the
// snapshot's state anyway, so no activation can tell a new one from a reused one. A guest
// without a memory of its own has nothing to snapshot (and wazero's Memory() is then a nil
// pointer in an interface): such instances are used once.
func (p *resetPool[T]) adopt(inst *instance) {
	p.mu.Lock()
	poolable, names := p.poolable && hasMemory(inst.mod), p.globals
	p.mu.Unlock()
	for _, name := range names {
		if !poolable {
			break
		}
		g, ok := inst.mod.ExportedGlobal(name).(api.MutableGlobal)
		if !ok {
			// Not what exportGlobals wrote: this instance is used once, and so is every other.
			poolable = false
			p.mu.Lock()
			p.poolable = false
			p.mu.Unlock()
		}
		inst.globals = append(inst.globals, g)
	}
	inst.poolable = poolable
	if !poolable {
		return
	}
	p.mu.Lock()
	if p.snap == nil {
		p.snap = inst.capture()
	}
	snap := p.snap
	p.mu.Unlock()
	inst.restore(snap)
}

// keep puts t, whose instance is inst, back to the snapshot and among the idle ones, and
// returns "", or returns why it did not (a Discard reason: ended in a guest fault, closed, not
// poolable, its memory grown past what the snapshot describes, or no room), and the caller
// closes it.
func (p *resetPool[T]) keep(t T, inst *instance) (discarded string) {
	p.mu.Lock()
	snap, room := p.snap, len(p.idle) < p.maxIdle
	p.mu.Unlock()
	// In this order: an instance that is not poolable may have no module to look at (an
	// Extism plug-in's, with pooling off).
	switch {
	case inst.faulted:
		return DiscardFaulted
	case snap == nil || !inst.poolable:
		return DiscardNotPoolable
	case inst.mod.IsClosed():
		return DiscardClosed
	case !hasMemory(inst.mod):
		return DiscardNotPoolable
	case inst.mod.Memory().Size() != uint32(len(snap.memory)):
		return DiscardMemoryGrown
	case !room:
		return DiscardPoolFull
	}
	inst.restore(snap)
	p.mu.Lock()
	p.idle = append(p.idle, t)
	p.mu.Unlock()
	return ""
}

// drain empties the idle list and returns what was in it, for the caller to close.
func (p *resetPool[T]) drain() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	idle := p.idle
	p.idle = nil
	return idle
}

// hasMemory reports whether mod defines and exports a memory.
func hasMemory(mod api.Module) bool {
	return mod != nil && len(mod.ExportedMemoryDefinitions()) > 0
}

func (inst *instance) capture() *resetImage {
	s := &resetImage{}
	if mem := inst.mod.Memory(); mem != nil {
		b, _ := mem.Read(0, mem.Size())
		s.memory = append([]byte(nil), b...)
	}
	for _, g := range inst.globals {
		s.globals = append(s.globals, g.Get())
	}
	return s
}

func (inst *instance) restore(s *resetImage) {
	if mem := inst.mod.Memory(); mem != nil {
		mem.Write(0, s.memory)
	}
	for i, g := range inst.globals {
		g.Set(s.globals[i])
	}
}

// closeIdle closes every idle instance.
func (c *compiledModule) closeIdle(ctx context.Context) {
	for _, inst := range c.drain() {
		_ = inst.mod.Close(ctx)
	}
}

// initSeed seeds the random source of every guest initialisation.
var initSeed = sha256.Sum256([]byte("wfhost-init"))

// newInitState is the state a guest initialises in: the activation's logger and limits, no
// handler (so no workflow verbs), a fixed clock and a fixed random stream.
func newInitState(act *state) *state {
	st := &state{limits: act.limits, logger: act.logger, done: act.done}
	if st.logger == nil {
		st.logger = slog.New(slog.DiscardHandler)
	}
	st.random = rand.NewChaCha8(initSeed)
	st.stdout = newLineLogger(st, slog.LevelInfo, "stdout")
	st.stderr = newLineLogger(st, slog.LevelWarn, "stderr")
	return st
}
