package engine_test

import (
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// TestTraceLinksParentAndChild: the parent's child step span links to the child's trace, and
// the child's trace holds a workflow.parent span, under its root, linked to the parent's.
func TestTraceLinksParentAndChild(t *testing.T) {
	t.Parallel()
	o := setupObs(t)
	run := o.start("parent", map[string]any{"n": 3})
	if r := o.await(run.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("parent: %s %+v", r.Status, r.Error)
	}
	kids := o.children(o.store, run.ID)
	if len(kids) != 1 {
		t.Fatalf("%d children", len(kids))
	}
	child := o.await(kids[0].RunID, settle)
	o.quietScrape()
	parentTrace, childTrace := engine.TraceIDOf(run.ID), engine.TraceIDOf(child.ID)
	var step, back *tracetest.SpanStub
	stubs := o.spans.GetSpans()
	for i, s := range stubs {
		attrs := map[string]string{}
		for _, kv := range s.Attributes {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		switch {
		case s.Name == "workflow.step" && attrs["step.kind"] == string(store.KindChild):
			step = &stubs[i]
		case s.Name == "workflow.parent":
			back = &stubs[i]
		}
	}
	if step == nil || back == nil {
		t.Fatalf("no child step span (%v) or no workflow.parent span (%v)", step != nil, back != nil)
	}
	if step.SpanContext.TraceID().String() != parentTrace || len(step.Links) != 1 || step.Links[0].SpanContext.TraceID().String() != childTrace {
		t.Fatalf("the child step's span: trace %s, links %+v; want the parent's trace linked to the child's", step.SpanContext.TraceID(), step.Links)
	}
	if back.SpanContext.TraceID().String() != childTrace || len(back.Links) != 1 || back.Links[0].SpanContext.TraceID().String() != parentTrace {
		t.Fatalf("the workflow.parent span: trace %s, links %+v; want the child's trace linked to the parent's", back.SpanContext.TraceID(), back.Links)
	}
}
