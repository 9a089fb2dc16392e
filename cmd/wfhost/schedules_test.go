package main

import (
	"strings"
	"testing"

	"github.com/wfhost/wfhost/api/wire"
)

// TestSchedulesCommands: create, list, get, next, pause, trigger, resume and delete through the
// CLI against the real API, and the refusals a user meets: each with its exit code and a
// message naming what was wrong.
func TestSchedulesCommands(t *testing.T) {
	cleanEnv(t)
	t.Setenv("WFHOST_URL", serve(t))
	t.Setenv("WFHOST_TOKEN", newTenant(t, "sched", ""))
	expect(t, 0, "deploy", testdata("examples.wasm"))

	r := expect(t, 0, "schedules", "create", "morning", "--workflow", "steps", "--cron", "0 0 9 * * MON-FRI",
		"--timezone", "America/New_York", "--input", `{"n":1}`, "--overlap", "buffer_one", "--jitter", "2s")
	matches(t, "create", r.stdout, `schedule\s+morning`, `when\s+0 0 9 \* \* MON-FRI \(America/New_York\)`, `overlap\s+buffer_one`, `jitter\s+2s`)
	expect(t, 0, "schedules", "create", "tick", "--workflow", "steps", "--every", "90s", "--paused")
	matches(t, "list", expect(t, 0, "schedules", "list").stdout, `morning\s+0 0 9`, `tick\s+every 1m30s\s+steps\s+skip\s+paused`)

	next := runJSON[wire.FireTimes](t, "schedules", "next", "morning", "-n", "5")
	if len(next.FireTimes) != 5 {
		t.Fatalf("next: %+v", next)
	}
	for _, ft := range next.FireTimes {
		if wd := ft.At.Weekday(); wd == 0 || wd == 6 || ft.At.Minute() != 0 || (ft.At.Hour() != 13 && ft.At.Hour() != 14) {
			t.Errorf("fire time %v is not 9:00 on a weekday in New York", ft.At)
		}
	}
	matches(t, "get", expect(t, 0, "schedules", "pause", "morning").stdout, `state\s+paused`)
	trig := runJSON[wire.Triggered](t, "schedules", "trigger", "morning")
	if trig.Outcome != "started" || trig.Run == nil || !strings.HasPrefix(trig.Run.IdempotencyKey, "schedule:morning@") {
		t.Fatalf("trigger: %+v", trig)
	}
	matches(t, "resume", expect(t, 0, "schedules", "resume", "morning").stdout, `next fire time`, `last run\s+`+trig.Run.ID)
	matches(t, "delete", expect(t, 0, "schedules", "delete", "morning").stdout, `schedule morning deleted`)

	expectJSONError(t, exitNotFound, "not_found", 404, "schedules", "get", "morning")
	expectJSONError(t, exitConflict, "conflict", 409, "schedules", "create", "tick", "--workflow", "steps", "--every", "90s")
	expectJSONError(t, exitNotFound, "not_found", 404, "schedules", "create", "x", "--workflow", "absent", "--every", "1m")
	for _, bad := range [][]string{
		{"schedules", "create", "x", "--workflow", "steps"},                         // neither --cron nor --every
		{"schedules", "create", "x", "--workflow", "steps", "--cron", "61 * * * *"}, // minute out of range
		{"schedules", "create", "x", "--workflow", "steps", "--cron", "@daily", "--timezone", "Atlantis/Lost"},
		{"schedules", "create", "x", "--workflow", "steps", "--every", "1m", "--overlap", "sometimes"},
		{"schedules", "create", "x/y", "--workflow", "steps", "--every", "1m"},
		{"schedules", "next", "tick", "-n", "1000"},
		{"schedules", "get", "\xff"},
	} {
		expectJSONError(t, exitOther, "invalid_request", 400, bad...)
	}
	for _, bad := range [][]string{
		{"schedules", "create", "x", "--workflow", "steps", "--every", "1500us"},
		{"schedules", "create", "x", "--workflow", "steps", "--jitter", "-1s", "--every", "1m"},
		{"schedules", "create", "x", "--workflow", "steps", "--every", "1m", "--input", "{"},
		{"schedules", "create", "--workflow", "steps", "--every", "1m"},
		{"schedules", "get"},
	} {
		expectJSONError(t, exitUsage, "usage", 0, bad...)
	}
}
