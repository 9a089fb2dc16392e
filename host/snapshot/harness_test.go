package snapshot_test

import (
	"bytes"
	"cmp"
	"compress/flate"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host/snapshot"
)

// The test's own wfhost host module and a tiny journal driver: enough of the engine's meaning
// of the host functions (steps keyed name, name#1, ...; a sleep journaled when first reached
// and suspending the run until it is marked elapsed) to run the example workflows across
// suspensions, either by unwinding the guest (asyncify) or, as the host does today, by
// aborting it and replaying from the top.

// entry is one journal entry.
type entry struct {
	kind, key string // kind "run" or "sleep"
	data      []byte // a step's output or error, a wait's event
	elapsed   bool   // a sleep's wake-up time has passed
	resolved  bool   // a wait's event arrived
	done      bool   // a step's final outcome is journaled
	failed    bool   // ... and it is an error
	attempts  int    // a step's failed attempts
	waiting   bool   // a step waits for its retry's backoff
}

// passState is the driver's state of one pass: what a snapshot must store beside the image.
type passState struct {
	cursor int
	seen   map[string]int
}

func (p passState) clone() passState { return passState{p.cursor, maps.Clone(p.seen)} }

func (p *passState) key(name string) string {
	n := p.seen[name]
	p.seen[name] = n + 1
	if n == 0 {
		return name
	}
	return name + "#" + strconv.Itoa(n)
}

// run is one activation on one instance.
type run struct {
	t       testing.TB
	journal *[]entry
	g       *snapshot.Guest // nil: an untransformed module, every suspension aborts
	pass    passState
	atCall  passState // pass at the entry of the latest suspending call

	// elapseSleeps makes every sleep return at once (a straight run, the reference).
	elapseSleeps bool
	// checkpointEvery > 0 unwinds at every step_run whose cursor is a multiple of it: a
	// snapshot at a durable boundary that is not a suspension.
	checkpointEvery int
	// inPlace continues the pass in the same instance after a checkpoint's capture, keeping
	// the images in images.
	inPlace bool
	images  []*snapshot.Image
	// checkpointAt > 0 unwinds at the step_run reached at that cursor (once).
	checkpointAt int

	open         string
	inStep       bool
	attempts     int  // the open step's attempts
	checkpointed bool // the guest unwound at a checkpoint, not to wait
	// waitingAt is the cursor of the entry the run suspended on, -1 when it was aborted for a
	// retry.
	waitingAt int
	pending   []byte
	hasPend   bool
	output    []byte
	failed    []byte
	ran       []string // keys of the step callbacks run
	logs      []string

	suspended    bool      // the guest unwound
	suspendedAt  time.Time // when the host function began the unwind
	resumedAt    time.Time // when the rewind reached the suspended call
	aborted      bool      // (no Guest) the guest was aborted
	restoreBegan time.Time
}

type runKey struct{}

func runFrom(ctx context.Context) *run { return ctx.Value(runKey{}).(*run) }

var errAborted = fmt.Errorf("suspended: the guest was aborted")

// resuming ends a rewind at the call that suspended, and keeps the pass as it is at this call.
func (r *run) resuming(ctx context.Context) bool {
	resumed := false
	if r.g != nil {
		var err error
		if resumed, err = r.g.Resuming(ctx); err != nil {
			panic(err)
		}
		if resumed {
			r.resumedAt = time.Now()
		}
	}
	r.atCall = r.pass.clone()
	return resumed
}

// suspend unwinds the guest, or aborts it when it is not transformed. The journal entry at the
// cursor is what the run waits for.
func (r *run) suspend(ctx context.Context) {
	r.waitingAt = r.pass.cursor
	if r.g == nil {
		r.abort()
	}
	r.suspendedAt = time.Now()
	if err := r.g.Suspend(ctx); err != nil {
		panic(err)
	}
	r.suspended = true
}

// abort ends the pass as the host does today: the host function panics and wazero unwinds the
// guest, whose instance is then discarded.
func (r *run) abort() {
	r.aborted = true
	panic(errAborted)
}

func (r *run) reply(s abi.Status, data []byte) uint64 {
	r.pending, r.hasPend = data, len(data) > 0
	return abi.PackReply(s, uint32(len(data)))
}

func read(mod api.Module, ptr, n uint64) []byte {
	b, ok := mod.Memory().Read(api.DecodeU32(ptr), api.DecodeU32(n))
	if !ok {
		panic("read outside memory")
	}
	return bytes.Clone(b)
}

// at returns the journal entry at the cursor, appending e when the journal ends there, and
// checks that it is the one the pass reached.
func (r *run) at(e entry) *entry {
	j := *r.journal
	c := r.pass.cursor
	if c == len(j) {
		*r.journal = append(j, e)
		j = *r.journal
	}
	if j[c].kind != e.kind || j[c].key != e.key {
		r.t.Errorf("nondeterministic: reached %s %s, journal has %s %s", e.kind, e.key, j[c].kind, j[c].key)
	}
	return &j[c]
}

func (r *run) stepRun(ctx context.Context, mod api.Module, s []uint64) {
	resumed := r.resuming(ctx)
	c := r.pass.cursor
	if r.g != nil && !resumed && c > 0 && (r.checkpointEvery > 0 && c%r.checkpointEvery == 0 || c == r.checkpointAt) {
		r.suspend(ctx)
		r.checkpointed, r.waitingAt = true, -1
		return
	}
	key := r.pass.key(string(read(mod, s[0], s[1])))
	var opts struct {
		Retry struct{ Attempts int } `json:"retry"`
	}
	if raw := read(mod, s[2], s[3]); len(raw) > 0 {
		if err := json.Unmarshal(raw, &opts); err != nil {
			r.t.Errorf("step_run options %s: %v", raw, err)
		}
	}
	e := r.at(entry{kind: "run", key: key})
	switch {
	case e.done && e.failed:
		r.pass.cursor++
		s[0] = r.reply(abi.StatusStepFailed, e.data)
	case e.done:
		r.pass.cursor++
		s[0] = r.reply(abi.StatusOK, e.data)
	case e.waiting && !r.elapseSleeps:
		r.suspend(ctx) // the retry's backoff has not passed
	default:
		e.waiting = false
		r.open, r.inStep, r.attempts = key, true, cmp.Or(opts.Retry.Attempts, 3)
		s[0] = r.reply(abi.StatusExecute, []byte(`{"attempt":`+strconv.Itoa(e.attempts+1)+`}`))
	}
}

// stepDone journals a step's result. A failed attempt with attempts left aborts the pass, even
// on a transformed module: a rewind into step_done could not be answered, since ABI v1 has no
// reply that tells the guest to run the callback again (the next pass's step_run does).
func (r *run) stepDone(ctx context.Context, mod api.Module, s []uint64) {
	r.resuming(ctx)
	if !r.inStep {
		r.t.Errorf("step_done outside a step")
	}
	r.inStep = false
	r.ran = append(r.ran, r.open)
	e := &(*r.journal)[r.pass.cursor]
	data := read(mod, s[1], s[2])
	if api.DecodeI32(s[0]) == 0 {
		e.done, e.data = true, data
		r.pass.cursor++
		s[0] = r.reply(abi.StatusOK, nil)
		return
	}
	e.attempts++
	var info struct{ NonRetryable bool }
	_ = json.Unmarshal(data, &info)
	if e.attempts >= r.attempts || info.NonRetryable {
		e.done, e.failed, e.data = true, true, data
		r.pass.cursor++
		s[0] = r.reply(abi.StatusStepFailed, data)
		return
	}
	e.waiting = true
	r.waitingAt = -1
	r.abort()
}

func (r *run) sleep(ctx context.Context, mod api.Module, s []uint64) {
	r.resuming(ctx)
	key := r.pass.key(string(read(mod, s[0], s[1])))
	e := r.at(entry{kind: "sleep", key: key, elapsed: r.elapseSleeps})
	if !e.elapsed {
		r.suspend(ctx)
		return
	}
	r.pass.cursor++
	s[0] = r.reply(abi.StatusOK, nil)
}

// waitEvent resolves with the run's event, once the test has delivered it (resolve).
func (r *run) waitEvent(ctx context.Context, mod api.Module, s []uint64) {
	r.resuming(ctx)
	key := r.pass.key(string(read(mod, s[0], s[1])))
	e := r.at(entry{kind: "wait", key: key, resolved: r.elapseSleeps, data: testEvent})
	if !e.resolved {
		r.suspend(ctx)
		return
	}
	r.pass.cursor++
	s[0] = r.reply(abi.StatusOK, e.data)
}

// testEvent is the payload of every event the tests deliver.
var testEvent = []byte(`{"via":"email"}`)

// resolve makes what the run waits for at cursor happen: the sleep's time passes, the retry's
// backoff passes, the event arrives.
func resolve(j []entry, cursor int) {
	if cursor < 0 || cursor >= len(j) {
		return
	}
	e := &j[cursor]
	e.elapsed, e.waiting = true, false
	if e.kind == "wait" {
		e.resolved, e.data = true, testEvent
	}
}

// instantiateHost registers the test's wfhost module in rt.
func instantiateHost(ctx context.Context, rt wazero.Runtime) error {
	impl := map[string]func(r *run, ctx context.Context, mod api.Module, s []uint64){
		abi.FuncStepRun:    (*run).stepRun,
		abi.FuncStepDone:   (*run).stepDone,
		abi.FuncSleep:      (*run).sleep,
		abi.FuncSleepUntil: (*run).sleep,
		abi.FuncWaitEvent:  (*run).waitEvent,
		abi.FuncTake: func(r *run, _ context.Context, mod api.Module, s []uint64) {
			if !r.hasPend || int(api.DecodeU32(s[1])) != len(r.pending) || !mod.Memory().Write(api.DecodeU32(s[0]), r.pending) {
				r.t.Errorf("take: bad call")
			}
			r.pending, r.hasPend = nil, false
		},
		abi.FuncLog: func(r *run, _ context.Context, mod api.Module, s []uint64) {
			r.logs = append(r.logs, string(read(mod, s[1], s[2])))
		},
		abi.FuncComplete: func(r *run, _ context.Context, mod api.Module, s []uint64) {
			r.output = read(mod, s[0], s[1])
		},
		abi.FuncFail: func(r *run, _ context.Context, mod api.Module, s []uint64) {
			r.failed = read(mod, s[0], s[1])
		},
		abi.FuncHTTPRequest: func(r *run, _ context.Context, _ api.Module, s []uint64) {
			s[0] = r.reply(abi.StatusError, nil)
		},
		abi.FuncSecretGet: func(r *run, _ context.Context, _ api.Module, s []uint64) {
			s[0] = r.reply(abi.StatusError, nil)
		},
	}
	b := rt.NewHostModuleBuilder(abi.ImportModule)
	for _, f := range abi.HostFuncs {
		fn := impl[f.Name]
		sig := f.Native()
		var params, results []api.ValueType
		for _, t := range sig.ParamTypes() {
			params = append(params, api.ValueType(t))
		}
		for _, t := range sig.Results {
			results = append(results, api.ValueType(t))
		}
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, s []uint64) {
			r := runFrom(ctx)
			if f.Name != abi.FuncTake {
				r.pending, r.hasPend = nil, false
			}
			fn(r, ctx, mod, s)
		}), params, results).Export(f.Name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

// harness is one wazero runtime with the test's host module, and a module compiled in it.
type harness struct {
	rt      wazero.Runtime
	cm      wazero.CompiledModule
	globals []string // nil for an untransformed module
	base    []byte   // memory right after initialisation
	init    bool     // the module exports _initialize
	// transient: the unwind buffer is grown at each suspension (Go, TinyGo).
	transient bool
	// stream: images go straight from the instance to their encoding and back (CaptureTo,
	// RestoreFrom), as a host would store them; saved.encoded holds them.
	stream bool
}

var (
	rtOnce sync.Once
	rt     wazero.Runtime
	rtErr  error
)

func runtime(t testing.TB) wazero.Runtime {
	t.Helper()
	rtOnce.Do(func() {
		ctx := context.Background()
		rt = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(wazero.NewCompilationCache()))
		if rtErr = instantiateHost(ctx, rt); rtErr == nil {
			_, rtErr = wasi_snapshot_preview1.Instantiate(ctx, rt)
		}
	})
	if rtErr != nil {
		t.Fatal(rtErr)
	}
	return rt
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", name))
	if err != nil {
		t.Skipf("%s is not built: %v", name, err)
	}
	return b
}

func needWasmOpt(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("wasm-opt"); err != nil {
		t.Skip("wasm-opt (binaryen) is not installed: apt-get install -y binaryen")
	}
}

var transformed sync.Map // fixture + optimize -> transformResult

type transformResult struct {
	wasm    []byte
	globals []string
	took    time.Duration
	err     error
}

// transform returns the fixture transformed with optimize ("" or "-O"), once per test binary.
func transform(t testing.TB, name, optimize string) transformResult {
	t.Helper()
	needWasmOpt(t)
	k := name + " " + optimize
	if v, ok := transformed.Load(k); ok {
		return v.(transformResult)
	}
	began := time.Now()
	wasm, globals, err := snapshot.Transform(context.Background(), fixture(t, name), snapshot.Options{Optimize: optimize})
	res := transformResult{wasm, globals, time.Since(began), err}
	transformed.Store(k, res)
	return res
}

func newHarness(t testing.TB, wasm []byte, globals []string) *harness {
	t.Helper()
	ctx := context.Background()
	rt := runtime(t)
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	_, hasInit := cm.ExportedFunctions()[abi.ExportInitialize]
	h := &harness{rt: rt, cm: cm, globals: globals, init: hasInit}
	mod := h.instantiate(t, &run{t: t})
	h.base = bytes.Clone(must(mod.Memory().Read(0, mod.Memory().Size())))
	_ = mod.Close(ctx)
	return h
}

func must(b []byte, ok bool) []byte {
	if !ok {
		panic("read outside memory")
	}
	return b
}

// instantiate makes a fresh initialised instance.
func (h *harness) instantiate(t testing.TB, r *run) api.Module {
	t.Helper()
	ctx := context.WithValue(context.Background(), runKey{}, r)
	mod, err := h.rt.InstantiateModule(ctx, h.cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	if h.init {
		if _, err := mod.ExportedFunction(abi.ExportInitialize).Call(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return mod
}

// saved is what a suspended run leaves: the image, the driver's pass at the suspending call
// and wfhost_run's arguments.
type saved struct {
	image   *snapshot.Image
	encoded []byte // with harness.stream
	pass    passState
	args    []uint64
}

// timings of one activation.
type timings struct {
	instantiate, restore, capture time.Duration
}

// activate runs one pass on a fresh instance: from the top, or from sv. It returns the run
// and, when the guest unwound, what it left.
func (h *harness) activate(t testing.TB, r *run, workflow, input string, sv *saved) (*saved, timings) {
	t.Helper()
	var tm timings
	ctx := context.WithValue(context.Background(), runKey{}, r)
	began := time.Now()
	mod := h.instantiate(t, r)
	defer mod.Close(ctx)
	tm.instantiate = time.Since(began)
	if h.globals != nil {
		g, err := snapshot.NewGuest(mod, h.globals)
		if err != nil {
			t.Fatal(err)
		}
		r.g = g
		if h.transient {
			g.TransientBuffer(0)
		}
	}
	var args []uint64
	if sv == nil {
		r.pass = passState{seen: map[string]int{}}
		if r.g != nil && h.transient {
			r.g.TransientBuffer(0)
		} else if r.g != nil {
			if err := r.g.ReserveBuffer(0); err != nil {
				t.Fatal(err)
			}
		}
		alloc := mod.ExportedFunction(abi.ExportAlloc)
		for _, s := range []string{workflow, input} {
			res, err := alloc.Call(ctx, uint64(len(s)))
			if err != nil {
				t.Fatal(err)
			}
			mod.Memory().Write(api.DecodeU32(res[0]), []byte(s))
			args = append(args, res[0], uint64(len(s)))
		}
	} else {
		r.pass = sv.pass.clone()
		args = sv.args
		r.restoreBegan = time.Now()
		var err error
		if sv.encoded != nil {
			err = r.g.RestoreFrom(ctx, bytes.NewReader(sv.encoded), h.base)
		} else {
			err = r.g.Restore(ctx, sv.image)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := mod.ExportedFunction(abi.ExportRun).Call(ctx, args...)
	for r.inPlace && err == nil && r.suspended {
		r.suspended = false
		if _, err := r.g.Suspended(ctx); err != nil {
			t.Fatal(err)
		}
		r.images = append(r.images, r.g.Capture())
		if err := r.g.Continue(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = mod.ExportedFunction(abi.ExportRun).Call(ctx, args...)
	}
	if sv != nil {
		tm.restore = r.resumedAt.Sub(r.restoreBegan)
	}
	if r.aborted {
		return nil, tm
	}
	if err != nil {
		t.Fatalf("%s: %v (logs %q)", abi.ExportRun, err, r.logs)
	}
	if r.g == nil {
		return nil, tm
	}
	if sv != nil && !r.resumedAt.After(r.restoreBegan) {
		t.Fatal("the rewind never reached the suspended call")
	}
	suspended, err := r.g.Suspended(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !suspended {
		return nil, tm
	}
	if h.stream {
		var buf bytes.Buffer
		if err := r.g.CaptureTo(&buf, h.base, flate.BestSpeed); err != nil {
			t.Fatal(err)
		}
		tm.capture = time.Since(r.suspendedAt)
		return &saved{encoded: buf.Bytes(), pass: r.atCall.clone(), args: args}, tm
	}
	im := r.g.Capture()
	tm.capture = time.Since(r.suspendedAt)
	return &saved{image: im, pass: r.atCall.clone(), args: args}, tm
}
