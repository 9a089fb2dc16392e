package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// The child workflow scenarios (abi/ABI.md §4.16), in every guest language: the parent and
// child workflows of examples/wasm/*.
func init() {
	conformanceScenarios = append(conformanceScenarios,
		conformanceScenario{"ChildWorkflowsComplete", func(t *testing.T, h *harness, st store.Store) transcript {
			// The parent starts a detached audit child by a given id, awaits a square child by
			// its derived id and completes with its output. Each child is started once and
			// linked to its step; a second parent whose audit id is taken gets child_refused.
			run := h.start("parent", map[string]any{"n": 7, "audit": true})
			r := h.await(run.ID, settle)
			tr := h.transcript(r)
			wantTranscript(t, tr, store.StatusCompleted, "audit", "square")
			if fmt.Sprint(tr.Output) != "map[audited:true square:49]" || tr.Steps[0].Kind != store.KindChild {
				t.Fatalf("want the square of 7 from the child: %+v", tr)
			}
			kids := h.children(st, run.ID)
			if len(kids) != 2 || kids[0].Link.ParentKey != "audit" || kids[0].Link.Awaited || kids[0].Link.ParentClose != abi.ParentCloseAbandon ||
				kids[1].Link.ParentKey != "square" || !kids[1].Link.Awaited || kids[1].Link.ParentClose != abi.ParentCloseCancel {
				t.Fatalf("the parent's children: %+v", kids)
			}
			var started abi.ChildStarted
			if err := json.Unmarshal(h.steps(run.ID)[0].Output, &started); err != nil || started.RunID != kids[0].RunID {
				t.Fatalf("the audit step's output %s, want the audit child's id %s", h.steps(run.ID)[0].Output, kids[0].RunID)
			}
			tr.Steps[0].Output = "the audit child's id" // differs between runs
			audit, square := h.await(kids[0].RunID, settle), h.await(kids[1].RunID, settle)
			if audit.IdempotencyKey != "audit-of-square" || square.IdempotencyKey != run.ID+":square" {
				t.Fatalf("the children's ids: %q and %q", audit.IdempotencyKey, square.IdempotencyKey)
			}
			if link, ok, err := st.ParentOf(context.Background(), store.DefaultTenant, square.ID); err != nil || !ok || link.ParentRunID != run.ID {
				t.Fatalf("the square child's parent: %+v %v %v", link, ok, err)
			}
			for _, c := range []store.Run{audit, square} {
				ctr := h.transcript(c)
				tr.Chain = append(tr.Chain, fmt.Sprintf("child %s: %s %v %s", c.Workflow, c.Status, ctr.Output, strings.Join(h.keys(c.ID), ",")))
			}
			second := h.await(h.start("parent", map[string]any{"n": 2, "audit": true}).ID, settle)
			str := h.transcript(second)
			wantTranscript(t, str, store.StatusFailed, "audit")
			if str.Steps[0].Status != store.StepFailed || !strings.HasPrefix(str.Steps[0].Error, abi.CodeChildRefused+": ") {
				t.Fatalf("a second audit child by the same id: %+v, want child_refused", str)
			}
			if n := len(h.children(st, second.ID)); n != 0 {
				t.Fatalf("the refused parent has %d children, want none", n)
			}
			tr.Chain = append(tr.Chain, "second parent: "+str.Error)
			return tr
		}},
		conformanceScenario{"ChildFailureCompensated", func(t *testing.T, h *harness, st store.Store) transcript {
			// The awaited child fails for good: the parent's step fails with child_failed (not
			// retried), carrying the child's error; the parent compensates and fails with it.
			run := h.start("parent", map[string]any{"n": 3, "failChild": true})
			r := h.await(run.ID, settle)
			tr := h.transcript(r)
			wantTranscript(t, tr, store.StatusFailed, "square", "compensate")
			steps := h.steps(run.ID)
			if steps[0].Status != store.StepFailed || steps[0].Error == nil || steps[0].Error.Code != abi.CodeChildFailed ||
				!steps[0].Error.NonRetryable || r.Error == nil || r.Error.Code != abi.CodeChildFailed {
				t.Fatalf("want the square step failed with child_failed and the run with it: %+v", tr)
			}
			kids := h.children(st, run.ID)
			if len(kids) != 1 {
				t.Fatalf("%d children, want 1", len(kids))
			}
			c := h.await(kids[0].RunID, settle)
			var details struct {
				RunID  string         `json:"runId"`
				Status string         `json:"status"`
				Error  *abi.ErrorInfo `json:"error"`
			}
			if err := json.Unmarshal(steps[0].Error.Details, &details); err != nil || details.RunID != c.ID ||
				details.Status != string(store.StatusFailed) || details.Error == nil || details.Error.Code != "child_boom" {
				t.Fatalf("the step error's details %s, want the child's id, status and error", steps[0].Error.Details)
			}
			tr.Chain = append(tr.Chain, fmt.Sprintf("child %s: %s %s %s", c.Workflow, c.Status, errorString(c.Error), strings.Join(h.keys(c.ID), ",")))
			return tr
		}},
		conformanceScenario{"ChildCancelledWithItsParent", func(t *testing.T, h *harness, st store.Store) transcript {
			// The parent is cancelled while its child holds: the cancel reaches the parent at
			// the child's step, which answers it; the child is cancelled with it (parentClose
			// cancel), sees it in its sleep, and ends cancelled; the parent compensates and
			// ends cancelled.
			run := h.start("parent", map[string]any{"n": 5, "holdMs": 600000})
			h.awaitStep(run.ID, "square", store.StepWaiting, settle)
			var kid string
			testenv.Await(t, settle, func() error {
				kids := h.children(st, run.ID)
				if len(kids) != 1 {
					return fmt.Errorf("%d children", len(kids))
				}
				kid = kids[0].RunID
				return nil
			})
			h.awaitStep(kid, "hold", store.StepSleeping, settle)
			if _, err := h.engine.CancelRun(context.Background(), store.DefaultTenant, run.ID, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			tr := h.transcript(h.await(run.ID, settle))
			wantTranscript(t, tr, store.StatusCancelled, "square", "compensate")
			if tr.Steps[0].Status != store.StepCancelled || tr.Steps[0].Kind != store.KindChild {
				t.Fatalf("want the child step cancelled: %+v", tr)
			}
			c := h.await(kid, settle)
			ctr := h.transcript(c)
			wantTranscript(t, ctr, store.StatusCancelled, "square", "hold")
			if ctr.Steps[1].Status != store.StepCancelled {
				t.Fatalf("want the child's hold cancelled: %+v", ctr)
			}
			tr.Chain = append(tr.Chain, fmt.Sprintf("child %s: %s %s %s", c.Workflow, c.Status, ctr.Error, strings.Join(h.keys(c.ID), ",")))
			return tr
		}},
	)
}

// children reads a run's children.
// onlyChild waits for runID to have exactly one child and returns its run id.
func (h *harness) onlyChild(runID string) string {
	h.t.Helper()
	var kid string
	testenv.Await(h.t, settle, func() error {
		kids := h.children(h.store, runID)
		if len(kids) != 1 {
			parent := h.getRun(runID)
			return fmt.Errorf("%d children (the parent is %s, error %+v)", len(kids), parent.Status, parent.Error)
		}
		kid = kids[0].RunID
		return nil
	})
	return kid
}

func (h *harness) children(st store.Store, runID string) []store.ChildRef {
	h.t.Helper()
	kids, err := st.ChildrenOf(context.Background(), store.DefaultTenant, runID)
	if err != nil {
		h.t.Fatalf("children of %s: %v", runID, err)
	}
	return kids
}
