package wf

import (
	"encoding/json"
	"errors"
	"fmt"
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
