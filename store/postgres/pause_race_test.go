package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/postgres"
)

// A start takes no lock a workflow's pause could wait on, and reads workflow_pauses in its
// insert (021_pause.sql): these tests hold a start open in its transaction, its snapshot
// taken before the pause or resume, and check that the pause waits for it and then catches
// its run. Without the wait between the two passes the pause returns while the start is
// still open, and the run is left pending (or, for a resume, paused).

// pauseFixture is a migrated store with a tenant and a workflow "w" v1 bound to a module.
func pauseFixture(t *testing.T) (*postgres.Store, store.NewRun) {
	t.Helper()
	return workflowOn(t, setup(t))
}

// workflowOn gives s a tenant "acme" and a workflow "w" v1 bound to a module, and returns a
// start of it.
func workflowOn(t *testing.T, s *postgres.Store) (*postgres.Store, store.NewRun) {
	t.Helper()
	ctx := t.Context()
	if err := s.EnsureTenant(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	b := []byte("module-v1")
	sum := sha256.Sum256(b)
	m := store.Module{TenantID: "acme", Digest: hex.EncodeToString(sum[:]), Size: len(b), ABIVersion: abi.Version, Bytes: b}
	if _, err := s.PutModule(ctx, m, []store.Workflow{{TenantID: "acme", Name: "w", Version: "v1", Digest: m.Digest}}, false); err != nil {
		t.Fatal(err)
	}
	return s, store.NewRun{TenantID: "acme", Workflow: "w", Version: "v1", Digest: m.Digest, Input: json.RawMessage(`{}`), RetentionDays: 1}
}

// inFlight starts a run in a transaction left open, runs op (a pause or a resume) on another
// goroutine, waits until op waits for the writers of runs, commits the start, and returns the
// run as op left it.
func inFlight(t *testing.T, s *postgres.Store, n store.NewRun, wantCreated store.RunStatus, op func(context.Context) (int, error)) store.Run {
	t.Helper()
	ctx := t.Context()
	tx, run, err := s.StartInFlight(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if run.Status != wantCreated {
		t.Fatalf("the start in flight created its run %s, want %s", run.Status, wantCreated)
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := op(ctx)
		done <- result{n, err}
	}()
	testenv.Await(t, 30*time.Second, func() error {
		select {
		case r := <-done:
			t.Fatalf("the pause or resume returned (%d, %v) while a start it raced was still open", r.n, r.err)
		default:
		}
		waiting, err := s.WaitingForWriters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !waiting {
			return errors.New("not waiting for the writers of runs yet")
		}
		return nil
	})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil {
		t.Fatal(r.err)
	}
	got, err := s.GetRun(ctx, n.TenantID, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A start whose insert missed the pause (its snapshot came first) is paused by the pause's
// second pass, after the start commits, before PauseWorkflow returns.
func TestAPauseWaitsForAStartInFlight(t *testing.T) {
	t.Parallel()
	s, n := pauseFixture(t)
	got := inFlight(t, s, n, store.StatusPending, func(ctx context.Context) (int, error) {
		return s.PauseWorkflow(ctx, "acme", "w", "")
	})
	if got.Status != store.StatusPaused {
		t.Fatalf("a run started while its workflow was paused is %s, want paused", got.Status)
	}
}

// A start whose insert still saw the pause a resume lifts (created paused) is resumed by the
// resume's second pass.
func TestAResumeWaitsForAStartInFlight(t *testing.T) {
	t.Parallel()
	s, n := pauseFixture(t)
	if _, err := s.PauseWorkflow(t.Context(), "acme", "w", ""); err != nil {
		t.Fatal(err)
	}
	got := inFlight(t, s, n, store.StatusPaused, func(ctx context.Context) (int, error) {
		return s.ResumeWorkflow(ctx, "acme", "w", "")
	})
	if got.Status != store.StatusPending || got.PausedAt != nil {
		t.Fatalf("a run started while its workflow was resumed is %s (paused at %v), want pending", got.Status, got.PausedAt)
	}
}

// The second passes count nothing twice, and take what they rely on: a run created paused is
// paused at its creation (paused_at = created_at), which a resume's second pass selects by,
// and a run paused later is not.
func TestTheSecondPassesCountNothingTwice(t *testing.T) {
	t.Parallel()
	s, n := pauseFixture(t)
	ctx := t.Context()
	own, _, err := s.CreateRun(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if paused, err := s.PauseWorkflow(ctx, "acme", "w", ""); err != nil || paused != 1 {
		t.Fatalf("paused %d runs (%v), want 1", paused, err)
	}
	created, _, err := s.CreateRun(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if created.Status != store.StatusPaused || created.PausedAt == nil || !created.PausedAt.Equal(created.CreatedAt) {
		t.Fatalf("a run created under the pause: %s, paused at %v, created at %v; want paused at its creation",
			created.Status, created.PausedAt, created.CreatedAt)
	}
	if r, err := s.GetRun(ctx, "acme", own.ID); err != nil || r.Status != store.StatusPaused || r.PausedAt.Equal(r.CreatedAt) {
		t.Fatalf("the run paused by the pause: %+v, %v; want paused after its creation", r, err)
	}
	if resumed, err := s.ResumeWorkflow(ctx, "acme", "w", ""); err != nil || resumed != 2 {
		t.Fatalf("resumed %d runs (%v), want 2", resumed, err)
	}
}

// A start whose insert read its workflow's gate before a hook committed (not hooked) is marked
// hooked by the hook's second pass, after the start commits, before PutHook returns: the hook
// fires when the run ends, as for every run that ends after the hook is set.
func TestAHookWaitsForAStartInFlight(t *testing.T) {
	t.Parallel()
	s, n := pauseFixture(t)
	got := inFlight(t, s, n, store.StatusPending, func(ctx context.Context) (int, error) {
		_, _, err := s.PutHook(ctx, store.Hook{TenantID: "acme", ID: "ops", Workflow: "w",
			When: []store.RunStatus{store.StatusCompleted}, URL: "https://hooks.example.com/in"})
		return 0, err
	})
	if ds, err := endOnlyRun(t, s, got.ID); err != nil || len(ds) != 1 || ds[0].HookID != "ops" {
		t.Fatalf("deliveries of a run started while its hook was set: %+v, %v; want the hook's one", ds, err)
	}
}

// A version rebound with completion hooks (its module's onEnd) while one of its runs is being
// started marks that run hooked too: the bind's second pass waits out the start in flight, as
// PutHook does, so the hook fires for the run that ends after the rebind.
func TestARebindWithHooksWaitsForAStartInFlight(t *testing.T) {
	t.Parallel()
	s, n := pauseFixture(t)
	b := []byte("module-v1-hotfix")
	sum := sha256.Sum256(b)
	m := store.Module{TenantID: "acme", Digest: hex.EncodeToString(sum[:]), Size: len(b), ABIVersion: abi.Version, Bytes: b}
	hooked := store.Workflow{TenantID: "acme", Name: "w", Version: "v1", Digest: m.Digest,
		OnEnd: []abi.Hook{{When: []string{"completed"}, Webhook: "https://hooks.example.com/in"}}}
	got := inFlight(t, s, n, store.StatusPending, func(ctx context.Context) (int, error) {
		_, err := s.PutModule(ctx, m, []store.Workflow{hooked}, true)
		return 0, err
	})
	if ds, err := endOnlyRun(t, s, got.ID); err != nil || len(ds) != 1 || ds[0].HookID != store.ModuleHookID("w", "v1", 0) {
		t.Fatalf("deliveries of a run started while its version was rebound with a hook: %+v, %v; want the module hook's one", ds, err)
	}
}

// endOnlyRun claims the one claimable run, which must be runID, completes it, and returns the
// hook deliveries its end wrote.
func endOnlyRun(t *testing.T, s *postgres.Store, runID string) ([]store.HookDelivery, error) {
	t.Helper()
	ctx := t.Context()
	claims, err := s.ClaimRuns(ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: time.Minute})
	if err != nil || len(claims) != 1 || claims[0].Run.ID != runID {
		t.Fatalf("claim: %d claims, %v", len(claims), err)
	}
	if err := s.Finish(ctx, claims[0].Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil); err != nil {
		t.Fatal(err)
	}
	return s.ListDeliveries(ctx, "acme", store.DeliveryFilter{RunID: runID})
}
