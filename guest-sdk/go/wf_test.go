package wf

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDescribeAndRetryWireShape(t *testing.T) {
	saved := workflows
	defer func() { workflows = saved }()
	workflows = nil
	Register(Workflow[int, int]{Name: "a", Version: "3", RetentionDays: 9, Triggers: []string{"go"},
		Retry: &RetryPolicy{Attempts: 4, Backoff: "linear", Base: 250 * time.Millisecond, Max: 2 * time.Second, Jitter: 0.1, OnExhausted: "pause"},
		Run:   func(*Context, int) (int, error) { return 0, nil }})
	var d struct {
		Workflows []map[string]any `json:"workflows"`
	}
	if err := json.Unmarshal(describeJSON(), &d); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(d.Workflows[0])
	want := `{"name":"a","retentionDays":9,"retry":{"attempts":4,"backoff":"linear","baseMs":250,"jitter":0.1,"maxMs":2000,"onExhausted":"pause"},"triggers":["go"],"version":"3"}`
	if string(got) != want {
		t.Fatalf("describe: %s\nwant      %s", got, want)
	}
}

func TestErrorsCrossTheABIWithTheirCodes(t *testing.T) {
	cases := []struct {
		err  error
		want errorInfo
	}{
		{errors.New("plain"), errorInfo{Message: "plain"}},
		{NewError("card_declined", "no %d", 5), errorInfo{Code: "card_declined", Message: "no 5"}},
		{NonRetryable(errors.New("bad input")), errorInfo{Message: "bad input", NonRetryable: true}},
		{NonRetryable(NewError("c", "m")), errorInfo{Code: "c", Message: "m", NonRetryable: true}},
		{fmt.Errorf("wrapped: %w", &StepError{Step: "pay", Code: "declined", Message: "no"}), errorInfo{Code: "declined", Message: "step pay failed: declined: no"}},
	}
	for _, c := range cases {
		got := toErrorInfo(c.err)
		if got.Code != c.want.Code || got.Message != c.want.Message || got.NonRetryable != c.want.NonRetryable {
			t.Errorf("%v: %+v, want %+v", c.err, got, c.want)
		}
	}
	se := stepError("pay", []byte(`{"code":"declined","message":"insufficient funds","details":{"left":3}}`))
	if se.Code != "declined" || se.Message != "insufficient funds" || string(se.Details) != `{"left":3}` {
		t.Fatalf("step error %+v", se)
	}
	if se := stepError("x", []byte("not json")); se.Message != "not json" {
		t.Fatalf("unreadable step error %+v", se)
	}
}

// deepPanic panics n frames down, for a stack longer than maxStackBytes.
func deepPanic(n int) int {
	if n == 0 {
		panic("deep")
	}
	return deepPanic(n-1) + 1
}

// TestAPanicKeepsItsStackInDetails: a panic in a step callback or a workflow body is an error
// with code panic, a one-line message that says the code once, and the stack in
// details.stack, bounded; a step's reaches the run's error when the workflow returns it.
func TestAPanicKeepsItsStackInDetails(t *testing.T) {
	_, stepErr := runStep(&StepContext{Attempt: 1}, func(*StepContext) (int, error) {
		var m map[string]int
		m["x"] = 1 // a runtime error: assignment to entry in nil map
		return 0, nil
	})
	saved := workflows
	defer func() { workflows = saved }()
	workflows = nil
	Register(Workflow[int, int]{Name: "p", Run: func(*Context, int) (int, error) { panic(fmt.Sprintf("bad %q", "input\x00\xff")) }})
	_, wfErr := runGuarded(&Context{workflow: "p"}, &workflows[0], []byte(`1`))
	_, deepErr := runStep(&StepContext{Attempt: 1}, func(*StepContext) (int, error) { return deepPanic(2000), nil })

	for _, c := range []struct {
		err         error
		message     string
		stackHolds  string
		whereItFell string
	}{
		{stepErr, "step panicked: assignment to entry in nil map", "TestAPanicKeepsItsStackInDetails", "runStep"},
		{wfErr, `workflow panicked: bad "input\x00\xff"`, "TestAPanicKeepsItsStackInDetails", "runGuarded"},
		{deepErr, "step panicked: deep", "deepPanic", "deepPanic"},
	} {
		info := toErrorInfo(c.err)
		if info.Code != "panic" || info.Message != c.message || strings.Contains(info.Message, "\n") || strings.Contains(info.Message, "panic: ") {
			t.Errorf("%v: %+v, want code panic and message %q, one line, the code not said again", c.err, info, c.message)
		}
		var details struct {
			Stack string `json:"stack"`
		}
		if err := json.Unmarshal(info.Details, &details); err != nil {
			t.Fatalf("details %s: %v", info.Details, err)
		}
		if !strings.Contains(details.Stack, c.whereItFell) || !strings.Contains(details.Stack, "goroutine ") {
			t.Errorf("%s: stack without %s:\n%s", c.message, c.whereItFell, details.Stack)
		}
		if len(details.Stack) > maxStackBytes+8 {
			t.Errorf("%s: a stack of %d bytes, over %d", c.message, len(details.Stack), maxStackBytes)
		}
		// The step's error as the workflow sees it, returned as the run's error: the stack
		// goes with it.
		data, _ := json.Marshal(info)
		run := toErrorInfo(fmt.Errorf("charge: %w", stepError("charge", data)))
		if run.Code != "panic" || string(run.Details) != string(info.Details) {
			t.Errorf("%s returned by the workflow: %+v", c.message, run)
		}
	}
	long := []byte(strings.Repeat("frame\n", maxStackBytes))
	if cut := cutStack(long); len(cut) != maxStackBytes+4 || !strings.HasSuffix(string(cut), "\n...") || string(long) != strings.Repeat("frame\n", maxStackBytes) {
		t.Errorf("a long stack cut to %d bytes, ending %q", len(cut), cut[len(cut)-10:])
	}
}

func TestDescribeCarriesTheFlow(t *testing.T) {
	saved := workflows
	defer func() { workflows = saved }()
	workflows = nil
	Register(Workflow[int, int]{Name: "a", Version: "1", Flow: &Flow{
		Concurrency: &Concurrency{Key: "$.customerId", Limit: 2},
		Rate:        &Rate{Key: "$.customerId", Limit: 10, Period: time.Minute},
		Debounce:    &Debounce{Period: 5 * time.Second},
		Priority:    -30,
	}, Run: func(*Context, int) (int, error) { return 0, nil }})
	var d struct {
		Workflows []map[string]json.RawMessage `json:"workflows"`
	}
	if err := json.Unmarshal(describeJSON(), &d); err != nil {
		t.Fatal(err)
	}
	want := `{"concurrency":{"key":"$.customerId","limit":2},"rate":{"key":"$.customerId","limit":10,"periodMs":60000},"debounce":{"periodMs":5000},"priority":-30}`
	if got := string(d.Workflows[0]["flow"]); got != want {
		t.Fatalf("flow: %s\nwant  %s", got, want)
	}
}

// The description carries the hooks in the ABI's shape: a start's empty version and an
// absent target are left out, so the host reads "latest version" and "no webhook".
func TestDescribeCarriesOnEnd(t *testing.T) {
	saved := workflows
	defer func() { workflows = saved }()
	workflows = nil
	Register(Workflow[int, int]{Name: "a", Version: "1", OnEnd: []Hook{
		{When: []string{"completed"}, Start: &HookStart{Workflow: "next"}},
		{When: []string{"failed", "cancelled"}, Webhook: "https://ops.example.com/wfhost"},
		{When: []string{"completed"}, Start: &HookStart{Workflow: "audit", Version: "2"}},
	}, Run: func(*Context, int) (int, error) { return 0, nil }})
	Register(Workflow[int, int]{Name: "b", Version: "1", Run: func(*Context, int) (int, error) { return 0, nil }})
	var d struct {
		Workflows []map[string]json.RawMessage `json:"workflows"`
	}
	if err := json.Unmarshal(describeJSON(), &d); err != nil {
		t.Fatal(err)
	}
	want := `[{"when":["completed"],"start":{"workflow":"next"}},{"when":["failed","cancelled"],"webhook":"https://ops.example.com/wfhost"},{"when":["completed"],"start":{"workflow":"audit","version":"2"}}]`
	if got := string(d.Workflows[0]["onEnd"]); got != want {
		t.Fatalf("onEnd: %s\nwant   %s", got, want)
	}
	if got, ok := d.Workflows[1]["onEnd"]; ok {
		t.Fatalf("a workflow without hooks declares onEnd %s", got)
	}
}
