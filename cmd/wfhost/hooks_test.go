package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/internal/testenv"
)

// TestHooksCommands: set, list, deliveries, rotate-secret and delete through the CLI against
// the real API, a start hook firing when a run ends, and the refusals a user meets: each with
// its exit code and a message naming what was wrong.
func TestHooksCommands(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "hooked", `{"allowedHosts":["https://hooks.example.com"]}`))
	expect(t, 0, "deploy", testdata("examples.wasm"))

	matches(t, "set start", expect(t, 0, "hooks", "set", "then", "--workflow", "steps", "--when", "completed", "--start", "steps").stdout,
		`hook\s+then`, `source\s+tenant`, `workflow\s+steps`, `when\s+completed`, `then\s+start steps`)
	matches(t, "set webhook", expect(t, 0, "hooks", "set", "ops", "--when", "failed,cancelled", "--webhook", "https://hooks.example.com/in").stdout,
		`then\s+POST https://hooks.example.com/in`, `signing secret\s+whsec_`)
	matches(t, "list", expect(t, 0, "hooks", "list").stdout, `ops\s+tenant\s+\*\s+failed,cancelled\s+POST`, `then\s+tenant\s+steps\s+completed\s+start steps`)
	matches(t, "rotate", expect(t, 0, "hooks", "rotate-secret").stdout, `signing secret\s+whsec_`)

	run := runJSON[wire.Run](t, "start", "steps", "--input", `{"n":1}`, "--wait")
	var page wire.DeliveryPage
	if err := testenv.Poll(t, 10*time.Second, func() error {
		page = runJSON[wire.DeliveryPage](t, "hooks", "deliveries", "--run", run.ID)
		if len(page.Deliveries) != 1 {
			return fmt.Errorf("deliveries %+v", page)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	d := page.Deliveries[0]
	if d.Kind != "start" || d.Status != "delivered" || d.StartedRunID == "" {
		t.Fatalf("delivery %+v", d)
	}
	matches(t, "triggeredBy", expect(t, 0, "hooks", "deliveries", "--started-run", d.StartedRunID).stdout, run.ID+`\s+then\s+start\s+delivered\s+1\s+`+d.StartedRunID)
	matches(t, "delete", expect(t, 0, "hooks", "delete", "then").stdout, `hook then deleted`)

	expectJSONError(t, exitNotFound, "not_found", 404, "hooks", "delete", "then")
	for _, bad := range [][]string{
		{"hooks", "set", "x", "--when", "completed", "--webhook", "https://evil.example.net/"},
		{"hooks", "set", "x", "--when", "done", "--start", "steps"},
		{"hooks", "set", "x", "--when", "completed", "--webhook", "ftp://hooks.example.com/"},
		{"hooks", "set", "x/y", "--when", "completed", "--start", "steps"},
		{"hooks", "set", "\xff", "--when", "completed", "--start", "steps"},
		{"hooks", "deliveries", "--run", "not-a-run"},
		{"hooks", "deliveries", "--status", "lost"},
	} {
		expectJSONError(t, exitOther, "invalid_request", 400, bad...)
	}
	for _, bad := range [][]string{
		{"hooks", "set", "x", "--when", "completed"},
		{"hooks", "set", "x", "--when", "completed", "--start", "steps", "--webhook", "https://hooks.example.com/"},
		{"hooks", "set", "--when", "completed", "--start", "steps"},
		{"hooks", "delete"},
		{"hooks", "list", "extra"},
	} {
		expectJSONError(t, exitUsage, "usage", 0, bad...)
	}
}
