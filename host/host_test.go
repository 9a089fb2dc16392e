package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
)

// journalStart is the creation time of the test runs: the guest's clock before any step.
var journalStart = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// memHandler is an in-memory journal: enough of the engine's meaning of the host functions to
// test the boundary on its own. Steps are keyed like the engine keys them (name, name#1, ...).
type memHandler struct {
	mu      sync.Mutex
	clock   time.Time
	journal map[string][]byte
	seen    map[string]int
	open    string
	ran     []string
	// timedOut are the attempts the host stopped (StepInterrupted), by step key.
	timedOut map[string]abi.ErrorInfo
	// forks are the parallel_run requests the guest made (parallel_test.go).
	forks []abi.Parallel
}

// errTimedOutForTest ends a pass whose attempt the host stopped, as the engine's suspension
// would.
var errTimedOutForTest = errors.New("the attempt timed out; the pass ends")

func newMemHandler() *memHandler {
	return &memHandler{clock: journalStart, journal: map[string][]byte{}, seen: map[string]int{}}
}

func (h *memHandler) key(name string) string {
	n := h.seen[name]
	h.seen[name] = n + 1
	if n == 0 {
		return name
	}
	return name + "#" + strconv.Itoa(n)
}

func (h *memHandler) StepRun(_ context.Context, name string, _ abi.StepOptions) (host.Reply, error) {
	k := h.key(name)
	if out, ok := h.journal[k]; ok {
		return host.Reply{Status: abi.StatusOK, Data: out}, nil
	}
	h.open = k
	return host.Reply{Status: abi.StatusExecute, Data: []byte(`{"attempt":1}`)}, nil
}

func (h *memHandler) StepDone(_ context.Context, outcome abi.Outcome, data []byte) (host.Reply, error) {
	if outcome != abi.OutcomeOK {
		return host.Reply{Status: abi.StatusStepFailed, Data: data}, nil
	}
	h.journal[h.open] = data
	h.ran = append(h.ran, h.open)
	// Like the engine: a step's journal time is when it completed, after anything it read.
	h.clock = time.Now().UTC().Truncate(time.Microsecond)
	return host.Reply{Status: abi.StatusOK}, nil
}

func (h *memHandler) Sleep(_ context.Context, name string, _ time.Duration) (host.Reply, error) {
	h.key(name)
	return host.Reply{Status: abi.StatusOK}, nil
}

func (h *memHandler) SleepUntil(_ context.Context, name string, _ time.Time) (host.Reply, error) {
	h.key(name)
	return host.Reply{Status: abi.StatusOK}, nil
}

func (h *memHandler) WaitEvent(_ context.Context, name string, _ abi.WaitOptions) (host.Reply, error) {
	h.key(name)
	return host.Reply{Status: abi.StatusTimeout}, nil
}

func (h *memHandler) StepInterrupted(_ context.Context, info abi.ErrorInfo) error {
	if h.timedOut == nil {
		h.timedOut = map[string]abi.ErrorInfo{}
	}
	h.timedOut[h.open] = info
	return errTimedOutForTest
}

func (h *memHandler) Now() time.Time { return h.clock }

func (h *memHandler) CurrentStep() string { return h.open }

// replay resets the per-pass state, keeping the journal, as a new activation would.
func (h *memHandler) replay() {
	h.seen = map[string]int{}
	h.ran = nil
	h.clock = journalStart
}

var (
	rtOnce sync.Once
	rt     *host.Runtime
	rtErr  error
)

func runtime(t testing.TB) *host.Runtime {
	t.Helper()
	rtOnce.Do(func() {
		rt, rtErr = host.NewRuntime(context.Background(), host.Config{CacheDir: filepath.Join(os.TempDir(), "wfhost-test-compile-cache")})
	})
	if rtErr != nil {
		t.Fatal(rtErr)
	}
	return rt
}

func load(t testing.TB, fixture string) *host.Module {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	m, err := runtime(t).Load(context.Background(), wasm)
	if err != nil {
		t.Fatalf("load %s: %v", fixture, err)
	}
	return m
}

func activate(t testing.TB, m *host.Module, workflow, runID string, input string, h host.Handler, limits host.Limits) (host.Result, error) {
	t.Helper()
	return runtime(t).Activate(context.Background(), m, host.Activation{
		Workflow: workflow, Input: json.RawMessage(input), RunID: runID, Handler: h, Limits: limits,
		Logger: slog.New(slog.DiscardHandler),
	})
}

func TestLoadDescribesTheExamples(t *testing.T) {
	t.Parallel()
	m := load(t, "examples.wasm")
	var names []string
	for _, w := range m.Description.Workflows {
		names = append(names, w.Name+"@"+w.Version)
	}
	if got := strings.Join(names, ","); got != "onboarding@1,poll@1,relay@1,order-saga@1,steps@1,ticker@1,timeouts@1,charge-or-pause@1,child@1,parent@1,parallel@1,digest@1" {
		t.Fatalf("workflows %s", got)
	}
	if m.ABIVersion != abi.Version || len(m.Digest) != 64 {
		t.Fatalf("module %+v", m)
	}
}

func TestReplayReturnsJournaledResultsWithoutRunningSteps(t *testing.T) {
	t.Parallel()
	m := load(t, "examples.wasm")
	h := newMemHandler()
	first, err := activate(t, m, "steps", "run-1", `{"n":5}`, h, host.Limits{})
	if err != nil || string(first.Output) != `{"sum":10}` {
		t.Fatalf("first pass: %s %v", first.Output, err)
	}
	if strings.Join(h.ran, ",") != "s,s#1,s#2,s#3,s#4" {
		t.Fatalf("first pass ran %v", h.ran)
	}
	h.replay()
	second, err := activate(t, m, "steps", "run-1", `{"n":5}`, h, host.Limits{})
	if err != nil || string(second.Output) != string(first.Output) {
		t.Fatalf("replay: %s %v", second.Output, err)
	}
	if len(h.ran) != 0 {
		t.Fatalf("replay ran callbacks %v", h.ran)
	}
}

type observed struct {
	Now        int64    `json:"now"`
	Elapsed    int64    `json:"elapsed"`
	MathRand   int64    `json:"mathRand"`
	CryptoRand uint64   `json:"cryptoRand"`
	MapOrder   []string `json:"mapOrder"`
	Step       struct {
		Now        int64  `json:"now"`
		CryptoRand uint64 `json:"cryptoRand"`
	} `json:"step"`
	AfterStep int64 `json:"afterStep"`
}

func observe(t *testing.T, m *host.Module, runID string) (observed, *memHandler) {
	t.Helper()
	h := newMemHandler()
	res, err := activate(t, m, "determinism", runID, `{}`, h, host.Limits{})
	if err != nil || res.Error != nil {
		t.Fatalf("determinism: %v %+v", err, res.Error)
	}
	var o observed
	if err := json.Unmarshal(res.Output, &o); err != nil {
		t.Fatal(err)
	}
	return o, h
}

func TestClockAndRandomAreDeterministicOutsideSteps(t *testing.T) {
	t.Parallel()
	m := load(t, "hostile.wasm")
	a, ha := observe(t, m, "run-a")
	b, _ := observe(t, m, "run-a")
	c, _ := observe(t, m, "run-c")

	journalTime := journalStart
	if a.Now != journalTime.UnixNano() || a.Elapsed != 0 {
		t.Fatalf("outside steps the clock reads %v (elapsed %d), want the journal's %v", time.Unix(0, a.Now).UTC(), a.Elapsed, journalTime)
	}
	if a.Now != b.Now || a.MathRand != b.MathRand || a.CryptoRand != b.CryptoRand || strings.Join(a.MapOrder, "") != strings.Join(b.MapOrder, "") {
		t.Fatalf("two passes of one run saw different values outside steps:\n%+v\n%+v", a, b)
	}
	if a.MathRand == c.MathRand && a.CryptoRand == c.CryptoRand {
		t.Fatal("two runs drew the same random numbers")
	}
	if a.Step.CryptoRand == b.Step.CryptoRand {
		t.Fatal("inside a step the random source should be real, but two passes drew the same")
	}
	if real := time.Unix(0, a.Step.Now); time.Since(real) > time.Minute || time.Since(real) < 0 {
		t.Fatalf("inside a step the clock should be real, read %v", real)
	}
	if a.AfterStep != ha.clock.UnixNano() {
		t.Fatalf("after the step the clock reads %v, want the step's journal time %v", time.Unix(0, a.AfterStep).UTC(), ha.clock)
	}
}

func TestLoadRejectsBadModules(t *testing.T) {
	t.Parallel()
	r := runtime(t)
	cases := map[string]struct {
		wasm []byte
		want string
	}{
		"not wasm":       {[]byte("#!/bin/sh\necho hi"), "not a WebAssembly module"},
		"empty module":   {[]byte("\x00asm\x01\x00\x00\x00"), "does not export its memory"},
		"truncated":      {[]byte("\x00asm\x01\x00\x00\x00\x01\x05"), "at byte 8: section type declares 5 bytes, 1 remain"},
		"wrong version":  {[]byte("\x00asm\x02\x00\x00\x00"), "binary format version 02000000, want 1"},
		"random garbage": {append([]byte("\x00asm\x01\x00\x00\x00"), make([]byte, 64)...), "custom section: LEB128 runs past the end"},
	}
	for name, c := range cases {
		_, err := r.Load(context.Background(), c.wasm)
		if !errors.Is(err, host.ErrInvalidModule) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidModule mentioning %q", name, err, c.want)
		}
	}
	small, err := host.NewRuntime(context.Background(), host.Config{MaxModuleBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close(context.Background())
	wasm, _ := os.ReadFile(filepath.Join("..", "testdata", "examples.wasm"))
	if _, err := small.Load(context.Background(), wasm); !errors.Is(err, host.ErrInvalidModule) || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("oversized module: %v", err)
	}
}

func TestHostileActivationsEndCleanly(t *testing.T) {
	t.Parallel()
	m := load(t, "hostile.wasm")
	// Only spin is about wall time. The others get a wall-time limit they cannot reach even on
	// a loaded machine under the race detector (where every memory.grow's copy is checked, and
	// membomb's sixteen grows took 3.5 s in CI), so each case ends by the limit it is about.
	const shortWallTime, longWallTime = time.Second, 2 * time.Minute
	cases := []struct {
		workflow, code, contains string
	}{
		{"spin", abi.CodeDeadline, "wall-time limit of 1s"},
		{"membomb", abi.CodeTrap, "out of memory"},
		{"trap", abi.CodeTrap, "deadlock"},
		{"oob", abi.CodeABIViolation, "outside the guest's memory"},
		{"bigoutput", abi.CodePayloadTooLarge, "limit"},
		{"no-such-workflow", "unknown_workflow", ""},
	}
	for _, c := range cases {
		t.Run(c.workflow, func(t *testing.T) {
			t.Parallel()
			limits := host.Limits{WallTime: longWallTime, MemoryPages: 256}
			if c.code == abi.CodeDeadline {
				limits.WallTime = shortWallTime
			}
			res, err := activate(t, m, c.workflow, "run", `{}`, newMemHandler(), limits)
			var ge *host.GuestError
			switch {
			case errors.As(err, &ge):
				if ge.Info.Code != c.code || !strings.Contains(ge.Info.Message, c.contains) {
					t.Fatalf("%s: %+v, want code %s containing %q", c.workflow, ge.Info, c.code, c.contains)
				}
			case err == nil && res.Error != nil:
				if res.Error.Code != c.code {
					t.Fatalf("%s failed with %+v, want code %s", c.workflow, res.Error, c.code)
				}
			default:
				t.Fatalf("%s: result %+v err %v", c.workflow, res, err)
			}
		})
	}
}

func TestCallerCancellationIsNotAGuestFault(t *testing.T) {
	t.Parallel()
	m := load(t, "hostile.wasm")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := runtime(t).Activate(ctx, m, host.Activation{Workflow: "spin", Input: json.RawMessage(`{}`), Handler: newMemHandler()})
	var ge *host.GuestError
	if errors.As(err, &ge) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled activation: %v, want the caller's context error", err)
	}
}

func TestConcurrentActivations(t *testing.T) {
	t.Parallel()
	m := load(t, "hostile.wasm")
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := `{"i":` + strconv.Itoa(i) + `}`
			res, err := activate(t, m, "echo", "r"+strconv.Itoa(i), in, newMemHandler(), host.Limits{})
			if err != nil || string(res.Output) != in {
				t.Errorf("echo %s: %s %v", in, res.Output, err)
			}
		}()
	}
	wg.Wait()
}

// FuzzActivationInput feeds arbitrary inputs to a guest: the host must end every pass with a
// result or a clean guest error, never a panic or a hang.
func FuzzActivationInput(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `[1,2]`, `"x"`, `{"a":`, "\x00\xff", ``} {
		f.Add(s)
	}
	m := load(f, "hostile.wasm")
	f.Fuzz(func(t *testing.T, input string) {
		res, err := activate(t, m, "echo", "fuzz", input, newMemHandler(), host.Limits{WallTime: 5 * time.Second})
		var ge *host.GuestError
		switch {
		case err == nil && (res.Output != nil) == (res.Error == nil):
		case errors.As(err, &ge):
		default:
			t.Fatalf("input %q: result %+v err %v", input, res, err)
		}
	})
}

func BenchmarkActivateGo(b *testing.B) {
	m := load(b, "hostile.wasm")
	for b.Loop() {
		if _, err := activate(b, m, "echo", "bench", `{"a":1}`, newMemHandler(), host.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A continue_as_new whose input no store could keep (a lone surrogate) fails the run with
// not_storable, as complete's output does, and nothing is continued.
func TestContinueAsNewRefusesAnUnstorableInput(t *testing.T) {
	t.Parallel()
	m := load(t, "hostile.wasm")
	res, err := activate(t, m, "abuse", "run", `{"case":"continue-bad-input"}`, newMemHandler(), host.Limits{})
	var ge *host.GuestError
	if !errors.As(err, &ge) || ge.Info.Code != abi.CodeNotStorable || res.Continue != nil {
		t.Fatalf("result %+v, error %v; want not_storable", res, err)
	}
}

// A child_run whose input no store could keep fails the run with not_storable, and one whose
// request is larger than any a run may hand on with payload_too_large, before any child is
// started.
func TestChildRunRefusesBadInputs(t *testing.T) {
	t.Parallel()
	m := load(t, "hostile.wasm")
	for name, code := range map[string]string{"child-bad-input": abi.CodeNotStorable, "child-huge": abi.CodePayloadTooLarge} {
		res, err := activate(t, m, "abuse", "run", `{"case":"`+name+`"}`, newMemHandler(), host.Limits{})
		var ge *host.GuestError
		if !errors.As(err, &ge) || ge.Info.Code != code {
			t.Fatalf("%s: result %+v, error %v; want %s", name, res, err, code)
		}
	}
}

// Every host function, misused: each misuse ends the pass with a clear abi_violation that
// names the function and the fault, and the host serves the next activation as before.
func TestEveryHostFunctionRefusesAbuse(t *testing.T) {
	t.Parallel()
	m := load(t, "hostile.wasm")
	cases := map[string]string{
		"name-with-hash":         "step_run: step name \"poll#1\" contains \"#\"",
		"empty-name":             "step name is empty",
		"long-name":              "the limit is 200",
		"invalid-utf8-name":      "not valid UTF-8",
		"bad-step-options":       "not a StepOptions JSON",
		"huge-options-length":    "options is 4294967295 bytes",
		"bad-retry-policy":       "retry attempts -4",
		"done-without-step":      "step_done called with no step callback running",
		"bad-outcome":            "outcome 7",
		"output-not-json":        "step output is not valid JSON",
		"nested-step":            "steps do not nest",
		"sleep-in-step":          "sleep called inside a step callback",
		"take-nothing":           "no reply data pending",
		"take-wrong-length":      "take: length 99",
		"take-out-of-bounds":     "outside the guest's memory",
		"wait-bad-options":       "not a WaitOptions JSON",
		"wait-no-event":          "event name is empty",
		"wait-bad-match":         "match must be a JSON object",
		"log-out-of-bounds":      "log: message",
		"complete-not-json":      "output is not valid JSON",
		"complete-twice":         "complete called after the workflow finished",
		"step-after-finish":      "step_run called after the workflow finished",
		"fail-out-of-bounds":     "fail: error",
		"continue-not-json":      "continue_as_new: the request is not a ContinueAsNew JSON",
		"continue-in-step":       "continue_as_new called inside a step callback",
		"continue-out-of-bounds": "continue_as_new: request at",
		"continue-after-finish":  "continue_as_new called after the workflow finished",
		"child-not-json":         "child_run \"c\": the request is not a ChildRun JSON",
		"child-empty-workflow":   "workflow name is empty",
		"child-workflow-slash":   "contains \"/\"",
		"child-version-nul":      "version: want at most 200 bytes of UTF-8 without NUL",
		"child-bad-id":           "child id name \"x#1\" contains \"#\"",
		"child-negative-timeout": "timeoutMs -1 is negative",
		"child-bad-parent-close": "parentClose \"orphan\"",
		"child-invalid-utf8":     "not valid UTF-8",
		"child-empty-name":       "child_run: step name is empty",
		"child-out-of-bounds":    "child_run: request at",
		"child-in-step":          "child_run called inside a step callback",
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, err := activate(t, m, "abuse", "run", `{"case":"`+name+`"}`, newMemHandler(), host.Limits{})
			var ge *host.GuestError
			if !errors.As(err, &ge) || ge.Info.Code != abi.CodeABIViolation || !strings.Contains(ge.Info.Message, want) {
				t.Fatalf("result %+v, error %v; want abi_violation containing %q", res, err, want)
			}
		})
	}
	// The host is unharmed.
	if res, err := activate(t, m, "echo", "after", `{"still":"fine"}`, newMemHandler(), host.Limits{}); err != nil || string(res.Output) != `{"still":"fine"}` {
		t.Fatalf("echo after the abuse: %s %v", res.Output, err)
	}
}
