package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// sql runs statements on the harness's schema directly, for states the API cannot make
// quickly (a 50,000-run backlog) or at all (a retention that has already passed).
func (h *harness) sql(query string, args ...any) int64 {
	h.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.DatabaseURL())
	if err != nil {
		h.t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET search_path TO "+h.schema); err != nil {
		h.t.Fatal(err)
	}
	tag, err := conn.Exec(ctx, query, args...)
	if err != nil {
		h.t.Fatalf("%s: %v", query, err)
	}
	return tag.RowsAffected()
}

func (h *harness) count(query string, args ...any) int {
	h.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.DatabaseURL())
	if err != nil {
		h.t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET search_path TO "+h.schema); err != nil {
		h.t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(ctx, query, args...).Scan(&n); err != nil {
		h.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestBacklogDoesNotHoldBackAnotherTenant: tenant "backlog" has 50,000 runnable runs when
// tenant "default" starts 20; all 20 complete while the backlog is still almost all pending.
// The assertion is about order, never time: claims alternate between tenants, so the new
// tenant's runs are claimed within its first claims whatever the backlog's size.
func TestBacklogDoesNotHoldBackAnotherTenant(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{noStart: true, concurrency: 8})
	ctx := context.Background()
	const backlog = 50000
	if _, _, _, err := h.engine.CreateTenant(ctx, "backlog", store.Limits{}); err != nil {
		t.Fatal(err)
	}
	res, err := h.engine.Deploy(ctx, "backlog", fixture(t, "examples.wasm"), false)
	if err != nil {
		t.Fatal(err)
	}
	n := h.sql(`INSERT INTO runs (tenant_id, workflow, version, digest, status, input, retention_days, available_at, created_at)
		SELECT 'backlog', 'steps', '1', $1, 'pending', '{"n":1}', 1, now() - interval '1 hour' + i * interval '1 millisecond', now()
		FROM generate_series(1, $2) AS i`, res.Module.Digest, backlog)
	if n != backlog {
		t.Fatalf("inserted %d backlog runs", n)
	}
	h.deploy("examples.wasm", false)
	var ids []string
	for i := range 20 {
		ids = append(ids, h.start("steps", map[string]any{"n": 1 + i%3}).ID)
	}
	if err := h.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.engine.Stop)
	for _, id := range ids {
		if r := h.await(id, settle); r.Status != store.StatusCompleted {
			t.Fatalf("run %s: %s %+v", id, r.Status, r.Error)
		}
	}
	pending := h.count(`SELECT count(*) FROM runs WHERE tenant_id = 'backlog' AND status = 'pending'`)
	done := h.count(`SELECT count(*) FROM runs WHERE tenant_id = 'backlog' AND status = 'completed'`)
	t.Logf("when the new tenant's 20 runs were done, the backlog had %d pending and %d completed", pending, done)
	if pending < backlog*9/10 {
		t.Fatalf("the backlog had only %d of %d runs pending when the other tenant finished: it was served first", pending, backlog)
	}
	if done == 0 {
		t.Fatal("no backlog run completed: the backlog was not served at all, so the test shows no interleaving")
	}
}

// heldRuns is a store that records, in the order they happen, the claims it hands out and the
// finishes it is asked for: the runs the engine holds at once. A finish is recorded before it
// is written, and a claim once it is made, so a claim the tenant's cap allowed only after a
// finish was written is always recorded after that finish. (The engine's "run ended" log line
// comes after the write: a run claimed in between logged its step first, and the test, reading
// the log, once saw two runs at once where the store never held two.)
type heldRuns struct {
	store.Store
	mu         sync.Mutex
	held       map[string]bool
	most, seen int
}

func (s *heldRuns) ClaimRuns(ctx context.Context, p store.ClaimParams) ([]store.Claim, error) {
	claims, err := s.Store.ClaimRuns(ctx, p)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range claims {
		s.held[c.Run.ID] = true
		s.seen++
	}
	s.most = max(s.most, len(s.held))
	return claims, err
}

func (s *heldRuns) ending(l store.Lease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, l.RunID)
}

func (s *heldRuns) Finish(ctx context.Context, l store.Lease, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) error {
	s.ending(l)
	return s.Store.Finish(ctx, l, status, output, info, guestLog)
}

func (s *heldRuns) CommitAndFinish(ctx context.Context, l store.Lease, st store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) error {
	s.ending(l)
	return s.Store.CommitAndFinish(ctx, l, st, status, output, info, guestLog)
}

// TestTenantConcurrencyCap: with a cap of 1, a tenant's slow runs execute one after another:
// the engine never holds two of its runs at once.
func TestTenantConcurrencyCap(t *testing.T) {
	t.Parallel()
	held := &heldRuns{held: map[string]bool{}}
	h := setup(t, harnessOptions{noStart: true, wrapStore: func(s store.Store) store.Store {
		held.Store = s
		return held
	}})
	ctx := context.Background()
	if _, err := h.engine.SetTenantLimits(ctx, store.DefaultTenant, store.Limits{Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	h.deploy("hostile.wasm", false)
	var ids []string
	for range 3 {
		ids = append(ids, h.start("slow-step", map[string]any{"ms": 150}).ID)
	}
	if err := h.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.engine.Stop)
	for _, id := range ids {
		if r := h.await(id, settle); r.Status != store.StatusCompleted {
			t.Fatalf("run %s: %s %+v", id, r.Status, r.Error)
		}
	}
	starts := 0
	for _, line := range strings.Split(h.logs.String(), "\n") {
		var rec struct{ Msg, Run string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Run != "" && strings.HasPrefix(rec.Msg, "slow step ran") {
			starts++
		}
	}
	held.mu.Lock()
	most := held.most
	held.mu.Unlock()
	if starts != 3 || most != 1 {
		t.Fatalf("%d slow steps started, at most %d at once; want 3 started, 1 at once", starts, most)
	}
}

// TestTenantLimitsApplyToActivations: each activation limit a tenant sets is enforced on its
// runs with a clear error, while the defaults would have let the same run through.
func TestTenantLimitsApplyToActivations(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	ctx := context.Background()
	h.deploy("hostile.wasm", false)
	h.deploy("examples.wasm", false)
	cases := []struct {
		name     string
		limits   store.Limits
		workflow string
		input    any
		code     string
		contains string
	}{
		{"activation time", store.Limits{ActivationTimeoutMs: 300}, "spin", nil, abi.CodeDeadline, "300ms"},
		// In a step callback the attempt is blamed, not the run (ABI.md §4.4): each attempt
		// ran out of time, and the step's final failure failed the run. Each retry is a new
		// activation on a new instance, whose _initialize counts against the wall time too: at
		// 300 ms a loaded CI machine under the race detector ran out of it there, so this case
		// gives the standard Go module two seconds.
		{"activation time in a step", store.Limits{ActivationTimeoutMs: 2000}, "slow-step", map[string]any{"ms": 6000}, abi.CodeTimeout, "wall-time limit of 2s"},
		{"output size", store.Limits{MaxOutputBytes: 100}, "echo", map[string]any{"pad": strings.Repeat("x", 200)}, abi.CodePayloadTooLarge, "100"},
		{"step output size", store.Limits{MaxStepOutputBytes: 20}, "onboarding", map[string]any{"email": "long-address@example.com"}, abi.CodePayloadTooLarge, "20"},
		{"steps per run", store.Limits{MaxStepsPerRun: 5}, "steps", map[string]any{"n": 8}, abi.CodeStepLimit, "5 steps"},
		{"memory pages", store.Limits{MemoryPages: 200}, "membomb", nil, abi.CodeTrap, "out of memory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := h.engine.SetTenantLimits(ctx, store.DefaultTenant, c.limits); err != nil {
				t.Fatal(err)
			}
			r := h.await(h.start(c.workflow, c.input).ID, settle)
			if r.Status != store.StatusFailed || r.Error == nil || r.Error.Code != c.code || !strings.Contains(r.Error.Message, c.contains) {
				t.Fatalf("status %s error %+v, want failed with %s mentioning %q", r.Status, r.Error, c.code, c.contains)
			}
		})
	}
	// Back on the defaults, the same runs get through the limits above.
	if _, err := h.engine.SetTenantLimits(ctx, store.DefaultTenant, store.Limits{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		workflow string
		input    any
	}{{"echo", map[string]any{"pad": strings.Repeat("x", 200)}}, {"steps", map[string]any{"n": 8}}} {
		if r := h.await(h.start(c.workflow, c.input).ID, settle); r.Status != store.StatusCompleted {
			t.Fatalf("%s on default limits: %s %+v", c.workflow, r.Status, r.Error)
		}
	}
}

// TestTenantLimitsApplyToRequests: request-side limits refuse the request itself.
func TestTenantLimitsApplyToRequests(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	ctx := context.Background()
	h.deploy("examples.wasm", false)
	run := h.start("onboarding", map[string]any{"email": "x@example.com", "delayMs": 600000})
	if _, err := h.engine.SetTenantLimits(ctx, store.DefaultTenant, store.Limits{
		MaxModuleBytes: 1000, MaxInputBytes: 50, MaxEventBytes: 30, MaxBufferedEvents: 2,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.engine.Deploy(ctx, store.DefaultTenant, fixture(t, "examples.wasm"), false); !isTooLarge(err, "1000") {
		t.Errorf("module over the limit: %v", err)
	}
	if _, _, err := h.engine.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "steps",
		Input: json.RawMessage(`{"n":1,"pad":"` + strings.Repeat("x", 60) + `"}`)}); !isTooLarge(err, "50") {
		t.Errorf("input over the limit: %v", err)
	}
	big := json.RawMessage(`{"pad":"` + strings.Repeat("x", 40) + `"}`)
	if _, err := h.engine.Signal(ctx, store.DefaultTenant, engine.SignalRequest{RunID: run.ID, Event: "verify", Payload: big}); !isTooLarge(err, "30") {
		t.Errorf("signal over the limit: %v", err)
	}
	if _, err := h.engine.Broadcast(ctx, store.DefaultTenant, engine.BroadcastRequest{Event: "verify", Payload: big}); !isTooLarge(err, "30") {
		t.Errorf("broadcast over the limit: %v", err)
	}
	for i := range 3 {
		_, err := h.engine.Signal(ctx, store.DefaultTenant, engine.SignalRequest{RunID: run.ID, Event: "other", Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
		if i < 2 && err != nil {
			t.Fatalf("buffered event %d: %v", i, err)
		}
		if i == 2 && !strings.Contains(fmt.Sprint(err), "2 events") {
			t.Fatalf("third buffered event: %v, want the limit of 2", err)
		}
	}
}

func isTooLarge(err error, limit string) bool {
	return err != nil && strings.Contains(err.Error(), "limit is "+limit) && errors.Is(err, engine.ErrTooLarge)
}

// TestRetention: a start request's retention is clamped to the ceiling; the sweeper deletes
// ended runs past their retention with their journals and leaves the others.
func TestRetention(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	ctx := context.Background()
	h.deploy("examples.wasm", false)
	long, _, err := h.engine.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":2}`), RetentionDays: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if long.RetentionDays != 365 {
		t.Fatalf("retention %d, want the ceiling of 365", long.RetentionDays)
	}
	if wf := h.start("onboarding", map[string]any{"email": "r@example.com", "delayMs": 1, "verifyTimeoutMs": 1}); h.await(wf.ID, settle).RetentionDays != 30 {
		t.Fatal("onboarding's own retention of 30 days was not used")
	}
	short := h.start("steps", map[string]any{"n": 2})
	waiting := h.start("onboarding", map[string]any{"email": "w@example.com", "delayMs": 1, "verifyTimeoutMs": 600000})
	h.await(long.ID, settle)
	h.await(short.ID, settle)
	h.awaitStep(waiting.ID, "await-verify", store.StepWaiting, settle)
	// Move short's end, and (to show live runs are never swept) waiting's creation, far back.
	h.sql(`UPDATE runs SET expires_at = now() - interval '1 day' WHERE id = $1`, short.ID)
	h.sql(`UPDATE runs SET created_at = now() - interval '3 years' WHERE id = $1`, waiting.ID)
	if n := h.engine.Sweep(ctx); n != 1 {
		t.Fatalf("swept %d runs, want 1", n)
	}
	if _, err := h.store.GetRun(ctx, store.DefaultTenant, short.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("swept run: %v", err)
	}
	if n := h.count(`SELECT count(*) FROM steps WHERE run_id = $1`, short.ID); n != 0 {
		t.Fatalf("%d journal rows of the swept run remain", n)
	}
	for _, id := range []string{long.ID, waiting.ID} {
		if _, err := h.store.GetRun(ctx, store.DefaultTenant, id); err != nil {
			t.Fatalf("run %s was swept: %v", id, err)
		}
	}
}

// TestSweepPrunesBroadcastsPastTheWindow: broadcast events older than the window (24 h by
// default) go with the sweep; newer ones and events sent to one run stay.
func TestSweepPrunesBroadcastsPastTheWindow(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	ctx := context.Background()
	h.deploy("examples.wasm", false)
	waiting := h.start("onboarding", map[string]any{"email": "p@example.com", "delayMs": 600000})
	for _, event := range []string{"old-news", "fresh-news"} {
		if _, err := h.engine.Broadcast(ctx, store.DefaultTenant, engine.BroadcastRequest{Event: event, Payload: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.engine.Signal(ctx, store.DefaultTenant, engine.SignalRequest{RunID: waiting.ID, Event: "verify", Payload: json.RawMessage(`{"early":true}`)}); err != nil {
		t.Fatal(err)
	}
	h.sql(`UPDATE events SET received_at = now() - interval '25 hours' WHERE name = 'old-news'`)
	h.sql(`UPDATE events SET received_at = now() - interval '25 hours' WHERE name = 'verify'`)
	h.engine.Sweep(ctx)
	if n := h.count(`SELECT count(*) FROM events WHERE name = 'old-news'`); n != 0 {
		t.Fatalf("the broadcast past the window was kept")
	}
	if n := h.count(`SELECT count(*) FROM events WHERE name = 'fresh-news'`); n != 1 {
		t.Fatalf("%d fresh broadcasts, want 1", n)
	}
	if n := h.count(`SELECT count(*) FROM events WHERE run_id = $1`, waiting.ID); n != 1 {
		t.Fatalf("%d events kept for the waiting run, want 1", n)
	}
}
