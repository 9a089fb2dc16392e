package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/testenv"
)

// cpHandler is memHandler taking a checkpoint at every step_run whose count since the last is
// every, keeping the latest with the handler's pass state at that call; it crashes the pass
// (an error from StepRun) at the crashAt'th step_run reached.
type cpHandler struct {
	*memHandler
	every, crashAt int
	calls, since   int
	latest         *host.Checkpoint
	latestSeen     map[string]int
	latestClock    time.Time
	taken          int
}

var errCrash = errors.New("crash")

func (h *cpHandler) WantCheckpoint() bool { return h.every > 0 && h.since+1 >= h.every }

func (h *cpHandler) Checkpointed(cp host.Checkpoint) {
	h.latest, h.latestSeen, h.latestClock = &cp, maps.Clone(h.seen), h.clock
	h.since = -1 // the step_run the checkpoint was taken at counts as the first after it
	h.taken++
}

func (h *cpHandler) StepRun(ctx context.Context, name string, opts abi.StepOptions) (host.Reply, error) {
	h.calls++
	h.since++
	if h.crashAt > 0 && h.calls == h.crashAt {
		return host.Reply{}, errCrash
	}
	return h.memHandler.StepRun(ctx, name, opts)
}

func TestCheckpointsRestoreToTheSameJournal(t *testing.T) {
	r := testenv.SnapshotRuntime(t)
	for _, fixture := range []string{"examples_as.wasm", "examples_rust.wasm"} {
		t.Run(fixture, func(t *testing.T) {
			wasm, err := os.ReadFile(filepath.Join("..", "testdata", fixture))
			if err != nil {
				t.Fatal(err)
			}
			m, err := r.Load(context.Background(), wasm)
			if err != nil {
				t.Fatal(err)
			}
			if !m.Snapshots() {
				t.Fatal("the module was not transformed for snapshots")
			}
			const n = 20
			input := `{"n":20,"sleepMs":0}`
			limits := host.Limits{}
			activation := func(h host.Handler, resume *host.Checkpoint) (host.Result, error) {
				return r.Activate(context.Background(), m, host.Activation{
					Workflow: "steps", Input: json.RawMessage(input), RunID: "run-1", Handler: h,
					Logger: slog.New(slog.DiscardHandler), Resume: resume, Limits: limits,
				})
			}

			// The reference: one pass with no checkpoint.
			ref := newMemHandler()
			want, err := activation(ref, nil)
			if err != nil || want.Error != nil {
				t.Fatalf("reference pass: %v %+v", err, want.Error)
			}

			// A pass taking a checkpoint every 3 step_runs, crashed at the 14th.
			h := &cpHandler{memHandler: newMemHandler(), every: 3, crashAt: 14}
			if _, err := activation(h, nil); !errors.Is(err, errCrash) {
				t.Fatalf("first pass: %v, want the crash", err)
			}
			if h.taken < 4 || h.latest == nil {
				t.Fatalf("%d checkpoints taken", h.taken)
			}
			ranBefore := slices.Clone(h.ran)

			// The next pass starts from the latest checkpoint: the handler is put where the
			// checkpoint's call finds the journal, as the engine puts its pass.
			h.seen, h.clock, h.ran, h.crashAt, h.calls = h.latestSeen, h.latestClock, nil, 0, 0
			got, err := activation(h, h.latest)
			if err != nil || got.Error != nil {
				t.Fatalf("restored pass: %v %+v", err, got.Error)
			}
			if string(got.Output) != string(want.Output) {
				t.Fatalf("restored pass output %s, the reference %s", got.Output, want.Output)
			}
			if !maps.EqualFunc(h.journal, ref.journal, func(a, b []byte) bool { return string(a) == string(b) }) {
				t.Fatalf("journals differ:\n%v\n%v", h.journal, ref.journal)
			}
			// The restored pass reached only the steps from its checkpoint on.
			if h.calls > n-len(ranBefore)+3 {
				t.Fatalf("the restored pass made %d step_run calls; from its checkpoint it needs at most %d", h.calls, n-len(ranBefore)+3)
			}

			t.Logf("%d checkpoints in the first pass, %d steps ran before the crash, %d step_run calls after the restore, checkpoint %d bytes", h.taken, len(ranBefore), h.calls, len(h.latest.Data))

			// A checkpoint of other code is refused before the handler is called.
			bad := *h.latest
			bad.Code = "other"
			fresh := &cpHandler{memHandler: newMemHandler()}
			if _, err := activation(fresh, &bad); !errors.Is(err, host.ErrRestore) || fresh.calls != 0 {
				t.Fatalf("restore of other code: %v after %d calls, want ErrRestore before any", err, fresh.calls)
			}
			// A damaged one likewise: cut, or its bytes flipped anywhere (the header's lengths,
			// the compressed image), or random bytes behind a valid beginning.
			// A guest whose memory was damaged may loop: its pass ends at its wall time. The
			// wall time also counts the fresh instance each of these passes makes (a failed
			// restore discards its instance), which under -race on a loaded machine has taken
			// more than 100ms: the bound must leave room for that, or a refusal the test
			// expects becomes a deadline.
			limits.WallTime = time.Second
			rng := rand.New(rand.NewPCG(1, 2))
			damaged := [][]byte{append([]byte(nil), h.latest.Data[:len(h.latest.Data)/2]...)}
			for range 8 {
				d := append([]byte(nil), h.latest.Data...)
				d[rng.IntN(len(d))] ^= byte(1 + rng.IntN(255))
				damaged = append(damaged, d)
				junk := append([]byte(nil), h.latest.Data[:7+rng.IntN(40)]...)
				for range rng.IntN(5000) {
					junk = append(junk, byte(rng.IntN(256)))
				}
				damaged = append(damaged, junk)
			}
			for i, d := range damaged {
				bad = *h.latest
				bad.Data = d
				res, err := activation(fresh, &bad)
				if err == nil && fresh.calls == 0 {
					t.Fatalf("damaged checkpoint %d: the pass ended %+v without a call", i, res)
				}
				if err != nil && !errors.Is(err, host.ErrRestore) && fresh.calls == 0 {
					t.Fatalf("damaged checkpoint %d: %v before any call, want ErrRestore", i, err)
				}
				// A flip the image's checks cannot see (a byte of the guest's own memory) may
				// restore and run on: then the pass ran from a checkpoint like any other, and
				// what it does is the guest's business, but the host must have stayed whole.
				fresh.memHandler, fresh.calls = newMemHandler(), 0
			}
		})
	}
}
