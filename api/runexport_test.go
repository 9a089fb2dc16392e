package api_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/internal/testenv"
)

// TestExportRun: GET .../export is the run and its whole journal in one document, and refuses
// what it cannot find as the other run routes do.
func TestExportRun(t *testing.T) {
	t.Parallel()
	srv, tok := setup(t)
	r := call(t, srv, "POST", "/v1/workflows/steps/runs", tok, []byte(`{"input":{"n":3}}`))
	if r.status != 201 {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	runPath := "/v1/workflows/steps/runs/" + id
	testenv.Await(t, 30*time.Second, func() error {
		if run := call(t, srv, "GET", runPath, tok, nil).json(t); run["status"] != "completed" {
			return fmt.Errorf("run is %v", run["status"])
		}
		return nil
	})
	r = call(t, srv, "GET", runPath+"/export", tok, nil)
	if r.status != 200 {
		t.Fatalf("export: %d %s", r.status, r.body)
	}
	var doc wire.RunExport
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != wire.ExportFormat || doc.Run.ID != id || doc.Run.ModuleDigest == "" || string(doc.Run.Input) != `{"n":3}` {
		t.Fatalf("export %s", r.body)
	}
	if len(doc.Journal) != 3 {
		t.Fatalf("journal of %d entries, want 3: %s", len(doc.Journal), r.body)
	}
	for i, s := range doc.Journal {
		if s.Seq != i || s.Kind != wire.StepKindRun || s.Status != wire.StepCompleted {
			t.Fatalf("entry %d: %+v", i, s)
		}
	}
	for _, c := range []struct{ name, path string }{
		{"another workflow's path", "/v1/workflows/poll/runs/" + id + "/export"},
		{"unknown run", "/v1/workflows/steps/runs/00000000-0000-0000-0000-000000000000/export"},
		{"run id not a uuid", "/v1/workflows/steps/runs/not-a-uuid/export"},
		{"non-UTF-8 run id", "/v1/workflows/steps/runs/%ff%fe/export"},
		{"non-UTF-8 workflow", "/v1/workflows/%ff/runs/" + id + "/export"},
	} {
		if r := call(t, srv, "GET", c.path, tok, nil); r.status != 404 || r.errorCode(t) != "not_found" {
			t.Errorf("%s: %d %s, want 404 not_found", c.name, r.status, r.body)
		}
	}
	if r := call(t, srv, "GET", runPath+"/export", "", nil); r.status != 401 {
		t.Errorf("no token: %d %s", r.status, r.body)
	}
	if r := call(t, srv, "GET", runPath+"/export?format=csv", tok, nil); r.status != 400 {
		t.Errorf("unknown query parameter: %d %s", r.status, r.body)
	}
}
