package host_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/host"
)

// TestAGoPanicKeepsItsStack: a panic in a Go workflow body or step callback, native or
// through the Extism door, ends in an error with code panic, a one-line message that says the
// code once, and the stack in details.stack naming the function that panicked; the step's
// error the workflow returns carries the step's stack.
func TestAGoPanicKeepsItsStack(t *testing.T) {
	for _, fixture := range []string{"hostile.wasm", "extism_go.wasm"} {
		m := load(t, fixture)
		for _, c := range []struct {
			input, message string
		}{
			{`{}`, "workflow panicked: runtime error: index out of range [11] with length 0"},
			{`{"inStep":true}`, "step explode failed: panic: step panicked: runtime error: index out of range [9] with length 0"},
		} {
			res, err := activate(t, m, "panic", "r", c.input, newMemHandler(), host.Limits{})
			if err != nil || res.Error == nil {
				t.Fatalf("%s %s: %+v %v, want the workflow's error", fixture, c.input, res, err)
			}
			e := res.Error
			if e.Code != "panic" || e.Message != c.message || strings.Contains(e.Message, "panic: panic") {
				t.Errorf("%s %s: %q %q, want panic %q", fixture, c.input, e.Code, e.Message, c.message)
			}
			var details struct {
				Stack string `json:"stack"`
			}
			if err := json.Unmarshal(e.Details, &details); err != nil || !strings.Contains(details.Stack, "probes.panicHere") ||
				!strings.Contains(details.Stack, "goroutine ") || strings.Contains(e.Message, "goroutine") {
				t.Errorf("%s %s: details %s (%v), want the stack naming probes.panicHere", fixture, c.input, e.Details, err)
			}
		}
	}
}
