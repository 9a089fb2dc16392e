package snapshot_test

import (
	"bytes"
	"compress/flate"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wfhost/wfhost/host/snapshot"
)

// guests are the example modules whose workflows the test resumes from snapshots.
var guests = []struct{ lang, file string }{
	{"assemblyscript", "examples_as.wasm"},
	{"rust", "examples_rust.wasm"},
}

// outcome is what a run did, whatever way it was driven.
type outcome struct {
	output  string
	journal []string // kind key, in order
	ran     []string // step callbacks, in order
}

func journalKeys(j []entry) []string {
	var out []string
	for _, e := range j {
		out = append(out, fmt.Sprintf("%s %s %s attempts=%d failed=%v", e.kind, e.key, e.data, e.attempts, e.failed))
	}
	return out
}

// straight runs the workflow on the untransformed module with every sleep, backoff and wait
// over at once (a retry still ends the pass: the next one runs the attempt).
func straight(t *testing.T, file, workflow, input string) outcome {
	return reference(t, fixture(t, file), workflow, input, true)
}

// replayed runs it as the host does today: every suspension aborts the guest, and the next
// activation replays the journal from the top.
func replayed(t *testing.T, file, workflow, input string) outcome {
	return reference(t, fixture(t, file), workflow, input, false)
}

func reference(t *testing.T, wasm []byte, workflow, input string, elapse bool) outcome {
	h := newHarness(t, wasm, nil)
	var (
		j   []entry
		ran []string
	)
	for pass := 0; ; pass++ {
		if pass > 1000 {
			t.Fatal("no end")
		}
		r := &run{t: t, journal: &j, elapseSleeps: elapse}
		h.activate(t, r, workflow, input, nil)
		ran = append(ran, r.ran...)
		if !r.aborted {
			if r.output == nil {
				t.Fatalf("no output (failed %s)", r.failed)
			}
			return outcome{string(r.output), journalKeys(j), ran}
		}
		resolve(j, r.waitingAt)
	}
}

// resumed runs it on the transformed module: every suspension unwinds the guest, its image is
// encoded and decoded, the sleep is marked elapsed, and the next activation restores the image
// into a fresh instance and rewinds into the sleep. With checkpointEvery, it also unwinds at
// step boundaries and resumes on another fresh instance. When crossCheck is set, each
// suspension is also reached by a full replay from the top on another fresh instance, and on
// every other suspension the run continues from the replay's image instead of its own.
func resumed(t *testing.T, tr transformResult, workflow, input string, checkpointEvery int, crossCheck bool) (outcome, int) {
	return resumedWith(t, tr, false, workflow, input, checkpointEvery, crossCheck)
}

func resumedWith(t *testing.T, tr transformResult, transient bool, workflow, input string, checkpointEvery int, crossCheck bool) (outcome, int) {
	if tr.err != nil {
		t.Fatal(tr.err)
	}
	h := newHarness(t, tr.wasm, tr.globals)
	h.transient = transient
	var (
		j   []entry
		ran []string
		sv  *saved
	)
	for pass := 0; ; pass++ {
		if pass > 1000 {
			t.Fatal("no end")
		}
		r := &run{t: t, journal: &j, checkpointEvery: checkpointEvery}
		next, _ := h.activate(t, r, workflow, input, sv)
		ran = append(ran, r.ran...)
		if r.aborted {
			// A retry: the next pass starts again from the latest image (or the top).
			continue
		}
		if next == nil {
			if r.output == nil {
				t.Fatalf("no output (failed %s)", r.failed)
			}
			return outcome{string(r.output), journalKeys(j), ran}, pass
		}
		// The image survives its encoding, full and as a delta from the initial memory.
		for _, base := range [][]byte{nil, h.base} {
			var buf bytes.Buffer
			if err := next.image.Encode(&buf, base, flate.BestSpeed); err != nil {
				t.Fatal(err)
			}
			im, err := snapshot.DecodeImage(&buf, base)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(im.Memory, next.image.Memory) || !slices.Equal(im.Globals, next.image.Globals) {
				t.Fatal("the image changed in its encoding")
			}
			next.image = im
		}
		if crossCheck && !r.inStep {
			// A full replay of the same journal reaches the same call in the same pass state.
			jr := slices.Clone(j)
			rr := &run{t: t, journal: &jr}
			if r.checkpointed {
				rr.checkpointAt = next.pass.cursor
			}
			replay, _ := h.activate(t, rr, workflow, input, nil)
			if replay == nil || replay.pass.cursor != next.pass.cursor || len(rr.ran) != 0 {
				t.Fatalf("pass %d: the replay did not suspend where the run did", pass)
			}
			diff := 0
			for i := range min(len(replay.image.Memory), len(next.image.Memory)) {
				if replay.image.Memory[i] != next.image.Memory[i] {
					diff++
				}
			}
			if pass < 3 {
				t.Logf("pass %d: image of the run and of a full replay: %d of %d memory bytes differ, globals equal %v",
					pass, diff, len(next.image.Memory), slices.Equal(replay.image.Globals, next.image.Globals))
			}
			if pass%2 == 1 {
				next = replay
			}
		}
		resolve(j, r.waitingAt)
		sv = next
	}
}

// resumeCases are the workflows and inputs the tests resume: steps with a sleep after every
// step, and poll, whose step keys repeat (check-status, check-status#1, ...).
var resumeCases = []struct{ workflow, input string }{
	{"steps", `{"n":6,"sleepMs":1000}`},
	{"poll", `{"until":5,"intervalMs":1000}`},
	// A sleep, a step that fails twice and is retried after a backoff, and a wait for an event.
	{"onboarding", `{"email":"a@example.com","delayMs":1000,"failWelcome":2,"verifyTimeoutMs":60000}`},
}

func TestResumeFromSnapshot(t *testing.T) {
	t.Parallel()
	for _, g := range guests {
		for _, opt := range []string{"", "-O"} {
			t.Run(g.lang+"/asyncify"+opt, func(t *testing.T) {
				t.Parallel()
				tr := transform(t, g.file, opt)
				for _, c := range resumeCases {
					want := straight(t, g.file, c.workflow, c.input)
					if got := replayed(t, g.file, c.workflow, c.input); !equal(got, want) {
						t.Fatalf("%s: replay %+v, straight run %+v", c.workflow, got, want)
					}
					if n := len(slices.DeleteFunc(slices.Clone(want.ran), func(k string) bool { return k != "send-welcome" })); c.workflow == "onboarding" && n != 3 {
						t.Fatalf("onboarding ran %q: want send-welcome three times (two failed attempts)", want.ran)
					}
					for _, every := range []int{0, 1, 3} {
						got, passes := resumed(t, tr, c.workflow, c.input, every, true)
						if !equal(got, want) {
							t.Fatalf("%s (checkpoint every %d): resumed %+v, straight run %+v", c.workflow, every, got, want)
						}
						t.Logf("%s checkpoint every %d: %d resumptions, output %s", c.workflow, every, passes, got.output)
					}
					if got, _ := resumedStream(t, tr, c.workflow, c.input); !equal(got, want) {
						t.Fatalf("%s (streamed images): resumed %+v, straight run %+v", c.workflow, got, want)
					}
				}
			})
		}
	}
}

// resumedStream resumes every suspension from an image encoded straight from the instance and
// decoded straight into a fresh one (CaptureTo, RestoreFrom).
func resumedStream(t *testing.T, tr transformResult, workflow, input string) (outcome, int) {
	h := newHarness(t, tr.wasm, tr.globals)
	h.stream = true
	var (
		j   []entry
		ran []string
		sv  *saved
	)
	for pass := 0; pass < 1000; pass++ {
		r := &run{t: t, journal: &j}
		next, _ := h.activate(t, r, workflow, input, sv)
		ran = append(ran, r.ran...)
		if r.aborted {
			continue
		}
		if next == nil {
			return outcome{string(r.output), journalKeys(j), ran}, pass
		}
		resolve(j, r.waitingAt)
		sv = next
	}
	t.Fatal("no end")
	return outcome{}, 0
}

func equal(a, b outcome) bool {
	return a.output == b.output && slices.Equal(a.journal, b.journal) && slices.Equal(a.ran, b.ran)
}

// TestResumeGoGuests is TestResumeFromSnapshot for standard Go (wasip1) and TinyGo guests. Their
// transform takes minutes (standard Go: a 3.6 MB module, about a minute of CPU and 450 MB), so
// it runs only when WFHOST_SNAPSHOT_GO names a directory that keeps the transformed modules
// between runs (the first run makes them). TinyGo's needs make testdata/tinygo.
func TestResumeGoGuests(t *testing.T) {
	if os.Getenv("WFHOST_SNAPSHOT_GO") == "" {
		t.Skip("WFHOST_SNAPSHOT_GO is not set")
	}
	for _, g := range []struct{ lang, original, transformed string }{
		{"tinygo", "tinygo/examples.wasm", "examples_tinygo.wasm"},
		{"go", "examples.wasm", "examples_go.wasm"},
	} {
		t.Run(g.lang, func(t *testing.T) {
			tr := goTransformed(t, g.original, g.transformed)
			for _, c := range resumeCases {
				want := straight(t, g.original, c.workflow, c.input)
				for _, every := range []int{0, 1, 3} {
					got, passes := resumedWith(t, tr, true, c.workflow, c.input, every, true)
					if !equal(got, want) {
						t.Fatalf("%s (checkpoint every %d): resumed %+v, straight run %+v", c.workflow, every, got, want)
					}
					t.Logf("%s checkpoint every %d: %d resumptions, output %s", c.workflow, every, passes, got.output)
				}
			}
		})
	}
}

// TestResumeGoGoroutines resumes a standard Go workflow whose state lives partly in goroutines
// blocked on channels, a map and the collector's heap (testdata/goroutines, built here with Go
// for wasip1), from images. Opt-in like TestResumeGoGuests.
func TestResumeGoGoroutines(t *testing.T) {
	dir := os.Getenv("WFHOST_SNAPSHOT_GO")
	if dir == "" {
		t.Skip("WFHOST_SNAPSHOT_GO is not set")
	}
	original := filepath.Join(dir, "goroutines.wasm")
	if _, err := os.Stat(original); err != nil {
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", original, ".")
		cmd.Dir = filepath.Join("testdata", "goroutines")
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOOS=wasip1", "GOARCH=wasm", "GOFLAGS=-mod=mod", "GOPROXY=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build testdata/goroutines: %v: %s", err, out)
		}
	}
	wasm, err := os.ReadFile(original)
	if err != nil {
		t.Fatal(err)
	}
	tr := goTransformed(t, original, "goroutines_asyncify.wasm")
	const in = `{"n":7}`
	want := reference(t, wasm, "goroutines", in, true)
	if want.output != `{"sum":28,"squares":140,"keys":7}` {
		t.Fatalf("straight run: %s", want.output)
	}
	for _, every := range []int{0, 2} {
		got, passes := resumedWith(t, tr, true, "goroutines", in, every, true)
		if !equal(got, want) {
			t.Fatalf("checkpoint every %d: resumed %+v, straight run %+v", every, got, want)
		}
		t.Logf("checkpoint every %d: %d resumptions, output %s", every, passes, got.output)
	}
}

// goTransformed returns a Go or TinyGo fixture transformed with -O, kept in the directory
// WFHOST_SNAPSHOT_GO names (made there on first use), or skips.
func goTransformed(t testing.TB, original, name string) transformResult {
	t.Helper()
	dir := os.Getenv("WFHOST_SNAPSHOT_GO")
	if dir == "" {
		t.Skip("WFHOST_SNAPSHOT_GO is not set")
	}
	path := filepath.Join(dir, name)
	asy, err := os.ReadFile(path)
	if err != nil {
		needWasmOpt(t)
		began := time.Now()
		src := fixture
		if filepath.IsAbs(original) {
			src = func(t testing.TB, name string) []byte {
				b, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
		}
		asy, err = snapshot.Asyncify(context.Background(), src(t, original), snapshot.Options{Optimize: "-O"})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("asyncify -O of %s: %v, %d bytes", original, time.Since(began), len(asy))
		if err := os.WriteFile(path, asy, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wasm, globals, err := snapshot.ExportGlobals(asy, snapshot.GlobalPrefix)
	return transformResult{wasm: wasm, globals: globals, err: err}
}

// TestUnwindBufferTooSmall: asyncify checks the buffer's bound only when the unwind ends
// (asyncify_stop_unwind traps), after writing the frames past it. So Suspended fails, no image
// is taken, and the instance (whose memory past the buffer may be damaged) is discarded; the
// run is replayed instead.
func TestUnwindBufferTooSmall(t *testing.T) {
	t.Parallel()
	for _, g := range guests {
		t.Run(g.lang, func(t *testing.T) {
			tr := transform(t, g.file, "-O")
			if tr.err != nil {
				t.Fatal(tr.err)
			}
			h := newHarness(t, tr.wasm, tr.globals)
			ctx := context.Background()
			var j []entry
			r := &run{t: t, journal: &j}
			rctx := context.WithValue(ctx, runKey{}, r)
			mod := h.instantiate(t, r)
			defer mod.Close(ctx)
			guest, err := snapshot.NewGuest(mod, h.globals)
			if err != nil {
				t.Fatal(err)
			}
			r.g = guest
			if err := guest.ReserveBuffer(16); err != nil {
				t.Fatal(err)
			}
			r.pass = passState{seen: map[string]int{}}
			var args []uint64
			for _, s := range []string{"steps", `{"n":3,"sleepMs":1000}`} {
				res, err := mod.ExportedFunction("wfhost_alloc").Call(rctx, uint64(len(s)))
				if err != nil {
					t.Fatal(err)
				}
				mod.Memory().Write(uint32(res[0]), []byte(s))
				args = append(args, res[0], uint64(len(s)))
			}
			if _, err = mod.ExportedFunction("wfhost_run").Call(rctx, args...); err != nil || !r.suspended {
				t.Fatalf("wfhost_run: %v (suspended %v)", err, r.suspended)
			}
			suspended, err := guest.Suspended(rctx)
			if err == nil || suspended {
				t.Fatalf("the unwind into 8 bytes of buffer did not fail: %v (suspended %v)", err, suspended)
			}
			t.Logf("unwind into 8 bytes of buffer: %v", firstLineOf(err))
		})
	}
}

func firstLineOf(err error) string {
	s := err.Error()
	if i := bytes.IndexByte([]byte(s), '\n'); i > 0 {
		s = s[:i]
	}
	return s
}

// TestLongRunImages resumes steps with a sleep after every step 1,000 times from images and
// logs how the image grows: a long run's image must stay the size of its live state.
func TestLongRunImages(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 resumptions")
	}
	t.Parallel()
	for _, g := range guests {
		t.Run(g.lang, func(t *testing.T) {
			tr := transform(t, g.file, "-O")
			if tr.err != nil {
				t.Fatal(tr.err)
			}
			h := newHarness(t, tr.wasm, tr.globals)
			var (
				j  []entry
				sv *saved
			)
			const n = 1000
			for pass := 0; ; pass++ {
				r := &run{t: t, journal: &j}
				next, _ := h.activate(t, r, "steps", `{"n":1000,"sleepMs":1000}`, sv)
				if next == nil {
					if want := fmt.Sprintf(`{"sum":%d}`, n*(n-1)/2); string(r.output) != want {
						t.Fatalf("output %s, want %s", r.output, want)
					}
					return
				}
				if pass == 0 || pass == 9 || pass == 99 || pass == n-2 {
					t.Logf("after %d resumptions: memory %d bytes, delta %d bytes compressed",
						pass, len(next.image.Memory), next.image.EncodedSize(h.base, flate.BestSpeed))
				}
				resolve(j, r.waitingAt)
				sv = next
			}
		})
	}
}
