package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// queryReadsState is the conformance scenario QueryReadsState (abi/ABI.md §4.17): a run
// waiting for its verification is asked the query "status" (with an argument, and without),
// answers from the workflow's own variables at its frontier, and nothing of the run changes;
// an unknown query and a query of the ended run are refused.
func queryReadsState(t *testing.T, h *harness, _ store.Store) transcript {
	ctx := context.Background()
	run := h.start("onboarding", map[string]any{"email": "Quinn@Example.com", "delayMs": 10, "verifyTimeoutMs": 60000})
	h.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
	before, err := h.store.GetRun(ctx, store.DefaultTenant, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	journal := h.journalString(run.ID)

	var answers []any
	for _, arg := range []string{`{"who":"ops","n":[1,2]}`, ""} {
		ans, err := h.engine.QueryRun(ctx, store.DefaultTenant, run.ID, "status", json.RawMessage(arg))
		if err != nil {
			t.Fatalf("query status (arg %q): %v", arg, err)
		}
		if ans.At.At.Key != "await-verify" || ans.At.At.Kind != store.KindWait || ans.At.New {
			t.Fatalf("query answered at %+v, want the unresolved wait await-verify", ans.At)
		}
		got := decode[struct {
			Stage  string          `json:"stage"`
			UserID string          `json:"userId"`
			Arg    json.RawMessage `json:"arg"`
		}](t, ans.Result)
		wantArg := arg
		if wantArg == "" {
			wantArg = "null"
		}
		if got.Stage != "awaiting-verify" || got.UserID != h.userID(run.ID) || !reflect.DeepEqual(decodeAny(t, got.Arg), decodeAny(t, json.RawMessage(wantArg))) {
			t.Fatalf("query status (arg %q) = %s", arg, ans.Result)
		}
		answers = append(answers, decodeAny(t, ans.Result))
	}
	if _, err := h.engine.QueryRun(ctx, store.DefaultTenant, run.ID, "no-such-query", nil); !errors.Is(err, engine.ErrUnknownQuery) {
		t.Fatalf("an unknown query: %v, want ErrUnknownQuery", err)
	}
	// A query commits nothing: not a journal entry, not an activation, not a lease.
	after, err := h.store.GetRun(ctx, store.DefaultTenant, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.journalString(run.ID); got != journal {
		t.Fatalf("the queries changed the journal:\n%s\nwas\n%s", got, journal)
	}
	if after.Activations != before.Activations || !after.UpdatedAt.Equal(before.UpdatedAt) || after.Status != before.Status {
		t.Fatalf("the queries changed the run: %+v, was %+v", after, before)
	}

	// A child step the journal has not ended is a frontier too (abi/ABI.md §4.17): the parent
	// registers no query, so its SDK's child call must answer unknown_query there; an SDK whose
	// child call left QUERY unhandled would fail the query instead.
	parent := h.start("parent", map[string]any{"n": 3, "holdMs": 600000})
	h.awaitStep(parent.ID, "square", store.StepWaiting, settle)
	if _, err := h.engine.QueryRun(ctx, store.DefaultTenant, parent.ID, "status", nil); !errors.Is(err, engine.ErrUnknownQuery) {
		t.Fatalf("a query of a parent waiting on its child: %v, want ErrUnknownQuery", err)
	}
	if _, err := h.engine.TerminateRun(ctx, store.DefaultTenant, parent.ID); err != nil {
		t.Fatal(err)
	}

	payload := fmt.Sprintf(`{"userId":%q,"via":"email"}`, h.userID(run.ID))
	if _, err := h.engine.Signal(ctx, store.DefaultTenant, engine.SignalRequest{RunID: run.ID, Event: "verify", Payload: json.RawMessage(payload)}); err != nil {
		t.Fatal(err)
	}
	tr := h.transcript(h.await(run.ID, settle))
	wantTranscript(t, tr, store.StatusCompleted, "create-user", "welcome-delay", "send-welcome", "await-verify")
	if _, err := h.engine.QueryRun(ctx, store.DefaultTenant, run.ID, "status", nil); !errors.Is(err, engine.ErrRunEnded) {
		t.Fatalf("a query of the ended run: %v, want ErrRunEnded", err)
	}
	tr.Queries = answers
	return tr
}

// TestQueryRefusesHostileInput: a query's name, argument and run are checked before any guest
// runs, each with its own error.
func TestQueryRefusesHostileInput(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	ctx := context.Background()
	run := h.start("onboarding", map[string]any{"email": "Hal@Example.com", "delayMs": 10, "verifyTimeoutMs": 60000})
	h.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
	for _, tc := range []struct {
		name, query, arg string
		want             error
	}{
		{"non-UTF-8 name", "st\xffatus", "", engine.ErrInvalid},
		{"a name with a slash", "a/b", "", engine.ErrInvalid},
		{"an empty name", "", "", engine.ErrInvalid},
		{"a name past 200 bytes", strings.Repeat("q", 201), "", engine.ErrInvalid},
		{"an argument that is not JSON", "status", `{"a":`, engine.ErrInvalid},
		{"an argument no store keeps", "status", `"\u0000"`, engine.ErrInvalid},
		{"an argument over the input limit", "status", `"` + strings.Repeat("x", 2<<20) + `"`, engine.ErrTooLarge},
	} {
		if _, err := h.engine.QueryRun(ctx, store.DefaultTenant, run.ID, tc.query, json.RawMessage(tc.arg)); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := h.engine.QueryRun(ctx, store.DefaultTenant, "00000000-0000-4000-8000-000000000000", "status", nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown run: %v, want store.ErrNotFound", err)
	}
	if _, err := h.engine.QueryRun(ctx, "other-tenant", run.ID, "status", nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another tenant's run: %v, want store.ErrNotFound", err)
	}
}

// BenchmarkQuery measures one query of a run waiting at its fourth journal entry: a dry pass
// of the whole journal and the handler's answer.
func BenchmarkQuery(b *testing.B) {
	h := setupBench(b)
	run := h.start("onboarding", map[string]any{"email": "Bench@Example.com", "delayMs": 1, "verifyTimeoutMs": 600000})
	h.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := h.engine.QueryRun(ctx, store.DefaultTenant, run.ID, "status", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestQueryOfAPendingRunAndAModuleWithoutTheFeature: a run no host has claimed yet is queried
// at its first durable call (a step its empty journal does not have); a run of a module that
// does not declare the query feature is refused without running any guest.
func TestQueryOfAPendingRunAndAModuleWithoutTheFeature(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{noStart: true})
	h.deploy("examples.wasm", false)
	h.deploy("probe.wasm", false)
	ctx := context.Background()
	run := h.start("onboarding", map[string]any{"email": "Pat@Example.com"})
	ans, err := h.engine.QueryRun(ctx, store.DefaultTenant, run.ID, "status", json.RawMessage(`7`))
	if err != nil {
		t.Fatal(err)
	}
	if !ans.At.New || ans.At.Seq != 0 || ans.At.At.Key != "create-user" || string(ans.Result) != `{"stage":"creating-user","userId":"","arg":7}` {
		t.Fatalf("a pending run answered %s at %+v", ans.Result, ans.At)
	}
	probe := h.start("probe", map[string]any{"where": "step-output"})
	if _, err := h.engine.QueryRun(ctx, store.DefaultTenant, probe.ID, "status", nil); !errors.Is(err, engine.ErrQueryUnsupported) {
		t.Fatalf("a module without the query feature: %v, want ErrQueryUnsupported", err)
	}
	for _, id := range []string{run.ID, probe.ID} {
		if got, err := h.store.GetRun(ctx, store.DefaultTenant, id); err != nil || got.Status != store.StatusPending || got.Activations != 0 {
			t.Fatalf("run %s after the queries: %+v %v, want it pending and never activated", id, got, err)
		}
	}
}

// TestQueryFaultsAreTheQuerysNotTheRuns: a dry pass that cannot answer fails the query with
// the reason (a guest that spins past the activation's bound, one that traps, one that ends
// without a durable call to answer at), and never touches the run.
func TestQueryFaultsAreTheQuerysNotTheRuns(t *testing.T) {
	t.Parallel()
	// The bound is what stops spin; at 300 ms a loaded CI machine under -race ran the echo
	// query's fresh Go instance out of it in wfhost_alloc, before any guest code.
	h := setup(t, harnessOptions{noStart: true, limits: store.Limits{ActivationTimeoutMs: 2000}})
	h.deploy("hostile.wasm", false)
	ctx := context.Background()
	for workflow, code := range map[string]string{"spin": "deadline_exceeded", "trap": "trap", "echo": "no_frontier"} {
		run := h.start(workflow, nil)
		_, err := h.engine.QueryRun(ctx, store.DefaultTenant, run.ID, "status", nil)
		var qe *engine.QueryError
		if !errors.As(err, &qe) || qe.Info.Code != code {
			t.Errorf("a query of %s: %v, want a QueryError of code %s", workflow, err, code)
		}
		if got, err := h.store.GetRun(ctx, store.DefaultTenant, run.ID); err != nil || got.Status != store.StatusPending || got.Activations != 0 {
			t.Errorf("run of %s after the query: %+v %v, want it pending and never activated", workflow, got, err)
		}
	}
}
