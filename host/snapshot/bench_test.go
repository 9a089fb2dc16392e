package snapshot_test

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/host/snapshot"
)

// TestMain lets the host runtime start this test binary as its compile worker.
func TestMain(m *testing.M) {
	host.ServeCompileWorkerIfAsked()
	os.Exit(m.Run())
}

// benchGuests are the modules measured: AssemblyScript and Rust are transformed here; standard
// Go and TinyGo only when WFHOST_SNAPSHOT_GO names a directory of transformed modules (their
// transform takes minutes; TestResumeGoGuests).
var benchGuests = []struct{ lang, file, transformed string }{
	{"assemblyscript", "examples_as.wasm", ""},
	{"rust", "examples_rust.wasm", ""},
	{"tinygo", "tinygo/examples.wasm", "examples_tinygo.wasm"},
	{"go", "examples.wasm", "examples_go.wasm"},
}

// variant returns the module of one guest: "original", "asyncify" or "asyncify-O" (for Go and
// TinyGo only "asyncify-O", read from WFHOST_SNAPSHOT_GO).
func variant(b *testing.B, g struct{ lang, file, transformed string }, v string) transformResult {
	b.Helper()
	if v == "original" {
		return transformResult{wasm: fixture(b, g.file)}
	}
	if g.transformed == "" {
		opt := ""
		if v == "asyncify-O" {
			opt = "-O"
		}
		return transform(b, g.file, opt)
	}
	if v != "asyncify-O" {
		b.Skip("only asyncify -O for Go and TinyGo")
	}
	return goTransformed(b, g.file, g.transformed)
}

// handler is a minimal in-memory journal for host.Activate.
type handler struct {
	clock   time.Time
	journal map[string][]byte
	seen    map[string]int
	open    string
}

func newHandler() *handler {
	return &handler{clock: time.Unix(1e9, 0).UTC(), journal: map[string][]byte{}, seen: map[string]int{}}
}

func (h *handler) key(name string) string {
	n := h.seen[name]
	h.seen[name] = n + 1
	if n == 0 {
		return name
	}
	return name + "#" + strconv.Itoa(n)
}

func (h *handler) StepRun(_ context.Context, name string, _ abi.StepOptions) (host.Reply, error) {
	k := h.key(name)
	if out, ok := h.journal[k]; ok {
		return host.Reply{Status: abi.StatusOK, Data: out}, nil
	}
	h.open = k
	return host.Reply{Status: abi.StatusExecute, Data: []byte(`{"attempt":1}`)}, nil
}

func (h *handler) StepDone(_ context.Context, _ abi.Outcome, data []byte) (host.Reply, error) {
	h.journal[h.open] = data
	return host.Reply{Status: abi.StatusOK}, nil
}

func (h *handler) Sleep(context.Context, string, time.Duration) (host.Reply, error) {
	return host.Reply{Status: abi.StatusOK}, nil
}

func (h *handler) SleepUntil(context.Context, string, time.Time) (host.Reply, error) {
	return host.Reply{Status: abi.StatusOK}, nil
}

func (h *handler) WaitEvent(context.Context, string, abi.WaitOptions) (host.Reply, error) {
	return host.Reply{Status: abi.StatusTimeout}, nil
}

func (h *handler) StepInterrupted(context.Context, abi.ErrorInfo) error {
	return errors.New("the benchmark's steps have no timeout")
}

func (h *handler) Now() time.Time      { return h.clock }
func (h *handler) CurrentStep() string { return h.open }

var (
	hostOnce sync.Once
	hostRT   *host.Runtime
	hostErr  error
)

func hostRuntime(b *testing.B) *host.Runtime {
	hostOnce.Do(func() {
		hostRT, hostErr = host.NewRuntime(context.Background(), host.Config{CacheDir: filepath.Join(os.TempDir(), "wfhost-snapshot-bench-cache")})
	})
	if hostErr != nil {
		b.Fatal(hostErr)
	}
	return hostRT
}

// BenchmarkActivateSteps10 is what asyncify costs a pass that does not suspend: one activation
// of steps with n=10 through the real host (host.Runtime.Activate), on the original module and
// on the transformed ones. "run" executes the ten steps; "replay" finds them all journaled.
func BenchmarkActivateSteps10(b *testing.B) {
	for _, g := range benchGuests {
		for _, v := range []string{"original", "asyncify", "asyncify-O"} {
			b.Run(g.lang+"/"+v, func(b *testing.B) {
				tr := variant(b, g, v)
				if tr.err != nil {
					b.Fatal(tr.err)
				}
				rt := hostRuntime(b)
				m, err := rt.Load(context.Background(), tr.wasm)
				if err != nil {
					b.Fatal(err)
				}
				act := func(h *handler) {
					res, err := rt.Activate(context.Background(), m, host.Activation{
						Workflow: "steps", Input: json.RawMessage(`{"n":10}`), RunID: "bench", Handler: h,
						Logger: slog.New(slog.DiscardHandler),
					})
					if err != nil || res.Output == nil {
						b.Fatalf("activate: %v %+v", err, res)
					}
				}
				b.Run("run", func(b *testing.B) {
					for b.Loop() {
						act(newHandler())
					}
					b.ReportMetric(float64(len(tr.wasm)), "wasm-bytes")
				})
				b.Run("replay", func(b *testing.B) {
					h := newHandler()
					act(h)
					for b.Loop() {
						h.seen = map[string]int{}
						act(h)
					}
				})
			})
		}
	}
}

// BenchmarkSuspendResume is one cycle of a long run that sleeps after every step, resumed from
// snapshots: restore the image into a fresh instance, rewind into the sleep, run one step,
// reach the next sleep, unwind and capture. It reports the parts (instantiate: a fresh
// initialised instance; restore: memory and globals written and the rewind back into the
// sleep; capture: the unwind and the copy of memory and globals; encode and decode: the image
// compressed as a delta from the initial memory, and back) and the image's sizes (raw; DEFLATE at BestSpeed, whole
// and as a delta from the initial memory).
func BenchmarkSuspendResume(b *testing.B) {
	for _, g := range benchGuests {
		b.Run(g.lang, func(b *testing.B) {
			tr := variant(b, g, "asyncify-O")
			if tr.err != nil {
				b.Fatal(tr.err)
			}
			h := newHarness(b, tr.wasm, tr.globals)
			h.transient = g.transformed != ""
			var j []entry
			r := &run{t: b, journal: &j}
			sv, _ := h.activate(b, r, "steps", `{"n":1000000000,"sleepMs":1000}`, nil)
			if sv == nil {
				b.Fatal("no suspension")
			}
			var sum timings
			var encode, decode time.Duration
			var raw, full, delta int
			n := 0
			for b.Loop() {
				j[sv.pass.cursor].elapsed = true
				r := &run{t: b, journal: &j}
				next, tm := h.activate(b, r, "steps", "", sv)
				if next == nil {
					b.Fatal("no suspension")
				}
				began := time.Now()
				var buf bytes.Buffer
				if err := next.image.Encode(&buf, h.base, flate.BestSpeed); err != nil {
					b.Fatal(err)
				}
				encode += time.Since(began)
				delta = buf.Len()
				began = time.Now()
				if _, err := snapshot.DecodeImage(&buf, h.base); err != nil {
					b.Fatal(err)
				}
				decode += time.Since(began)
				sum.instantiate += tm.instantiate
				sum.restore += tm.restore
				sum.capture += tm.capture
				sv = next
				n++
			}
			raw = len(sv.image.Memory)
			full = sv.image.EncodedSize(nil, flate.BestSpeed)
			us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
			b.ReportMetric(us(sum.instantiate), "instantiate-µs")
			b.ReportMetric(us(sum.restore), "restore-µs")
			b.ReportMetric(us(sum.capture), "capture-µs")
			b.ReportMetric(us(encode), "encode-µs")
			b.ReportMetric(us(decode), "decode-µs")
			b.ReportMetric(float64(raw), "image-bytes")
			b.ReportMetric(float64(full), "flate-bytes")
			b.ReportMetric(float64(delta), "delta-flate-bytes")
		})
	}
}

// BenchmarkCheckpoint is what a snapshot at a step boundary costs a pass that goes on in the
// same instance: steps with n=100 and no sleeps, without checkpoints and with one at every
// step (unwind, copy of memory and globals, rewind; no encoding). The difference divided by
// 100 is one checkpoint.
func BenchmarkCheckpoint(b *testing.B) {
	for _, g := range benchGuests {
		tr := variant(b, g, "asyncify-O")
		if tr.err != nil {
			b.Fatal(tr.err)
		}
		h := newHarness(b, tr.wasm, tr.globals)
		h.transient = g.transformed != ""
		for _, every := range []int{0, 1} {
			b.Run(g.lang+"/every="+strconv.Itoa(every), func(b *testing.B) {
				for b.Loop() {
					var j []entry
					r := &run{t: b, journal: &j, checkpointEvery: every, inPlace: true}
					h.activate(b, r, "steps", `{"n":100}`, nil)
					if r.output == nil || len(r.images) != 99*every {
						b.Fatalf("output %s, %d images", r.output, len(r.images))
					}
				}
			})
		}
	}
}

// BenchmarkSleepyRun is the replay-growth scenario in this package's harness: steps
// with a sleep after every step, S steps, every suspension either resumed from an image
// (restored into a fresh instance; encoded and decoded on the way, as a store would) or, as
// today, aborted and replayed from the top. "images" copies each image out of the instance and
// encodes it, then decodes it and writes it whole into the next; "stream" encodes straight from
// the instance's memory and decodes straight into the next one's, writing only the blocks that
// differ from its initial memory. It reports the process's CPU time per step (less
// sensitive than wall time to other work on a shared machine): flat with images, growing with S
// by replay. Fresh instances every pass (no pool) in both.
func BenchmarkSleepyRun(b *testing.B) {
	for _, g := range benchGuests[:2] {
		tr := variant(b, g, "asyncify-O")
		if tr.err != nil {
			b.Fatal(tr.err)
		}
		h := newHarness(b, tr.wasm, tr.globals)
		orig := newHarness(b, fixture(b, g.file), nil)
		for _, s := range []int{10, 100, 1000} {
			input := `{"n":` + strconv.Itoa(s) + `,"sleepMs":1000}`
			b.Run(g.lang+"/images/S="+strconv.Itoa(s), func(b *testing.B) {
				cpu := cpuTime()
				for b.Loop() {
					var (
						j  []entry
						sv *saved
					)
					for {
						r := &run{t: b, journal: &j}
						next, _ := h.activate(b, r, "steps", input, sv)
						if next == nil {
							break
						}
						var buf bytes.Buffer
						if err := next.image.Encode(&buf, h.base, flate.BestSpeed); err != nil {
							b.Fatal(err)
						}
						im, err := snapshot.DecodeImage(&buf, h.base)
						if err != nil {
							b.Fatal(err)
						}
						next.image = im
						resolve(j, r.waitingAt)
						sv = next
					}
				}
				b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N*s), "cpu-µs/step")
			})
			b.Run(g.lang+"/stream/S="+strconv.Itoa(s), func(b *testing.B) {
				hs := *h
				hs.stream = true
				cpu := cpuTime()
				for b.Loop() {
					var (
						j  []entry
						sv *saved
					)
					for {
						r := &run{t: b, journal: &j}
						next, _ := hs.activate(b, r, "steps", input, sv)
						if next == nil {
							break
						}
						resolve(j, r.waitingAt)
						sv = next
					}
				}
				b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N*s), "cpu-µs/step")
			})
			if s > 100 && testing.Short() {
				continue
			}
			b.Run(g.lang+"/replay/S="+strconv.Itoa(s), func(b *testing.B) {
				cpu := cpuTime()
				for b.Loop() {
					var j []entry
					for {
						r := &run{t: b, journal: &j}
						orig.activate(b, r, "steps", input, nil)
						if !r.aborted {
							break
						}
						resolve(j, r.waitingAt)
					}
				}
				b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N*s), "cpu-µs/step")
			})
		}
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
