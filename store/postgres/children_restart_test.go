package postgres_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// A run's mark as a child (runs.is_child, 020_children.sql) is in the database, not in a
// host: a child started by one store, and continued as new by it, wakes its parent when it
// ends under another store opened on the same schema after the first is closed (a daemon
// restarted between the child's start and its end).
func TestAChildWakesItsParentAfterARestart(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	first := open(t, schema)
	ctx := t.Context()
	if err := first.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	_, n := workflowOn(t, first)
	claim := func(s store.Store, runID string) store.Claim {
		t.Helper()
		claims, err := s.ClaimRuns(ctx, store.ClaimParams{Owner: "test", Limit: 1, LeaseFor: time.Minute})
		if err != nil || len(claims) != 1 || claims[0].Run.ID != runID {
			t.Fatalf("claims %+v (%v), want run %s alone", claims, err, runID)
		}
		return claims[0]
	}

	parent, _, err := first.CreateRun(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	pc := claim(first, parent.ID)
	child := n
	child.IdempotencyKey = parent.ID + ":kid"
	_, childID, err := first.StartChild(ctx, pc.Lease, nil, store.Step{RunID: parent.ID, Seq: 0, Key: "kid", Kind: store.KindChild, StartedAt: time.Now()},
		child, store.ChildLink{ParentRunID: parent.ID, ParentKey: "kid", ParentClose: abi.ParentCloseCancel, Awaited: true}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cc := claim(first, childID)
	next := n
	next.Input = json.RawMessage(`{"turn":1}`)
	succ, err := first.FinishAndContinue(ctx, cc.Lease, nil, store.StatusContinued, nil, nil, next, nil)
	if err != nil {
		t.Fatal(err)
	}
	first.Close()

	second := open(t, schema)
	sc := claim(second, succ.ID)
	if err := second.Finish(ctx, sc.Lease, store.StatusCompleted, json.RawMessage(`49`), nil, nil); err != nil {
		t.Fatal(err)
	}
	steps, err := second.ListSteps(ctx, "acme", parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].Status != store.StepCompleted || string(steps[0].Output) != "49" {
		t.Fatalf("the parent's journal %+v, want its child step completed with 49", steps)
	}
	claim(second, parent.ID)
}
