package abi

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestDecodeStepOptions(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]StepOptions{
		``:                          {},
		`{}`:                        {},
		`null`:                      {},
		`{"retry":{"attempts":5}}`:  {Retry: &RetryPolicy{Attempts: 5}},
		`{"retry":null,"future":1}`: {}, // ABI.md §8: unknown fields are ignored
	} {
		got, err := DecodeStepOptions([]byte(raw))
		if err != nil {
			t.Errorf("%q: %v", raw, err)
			continue
		}
		if (got.Retry == nil) != (want.Retry == nil) || got.Retry != nil && *got.Retry != *want.Retry {
			t.Errorf("%q: %+v, want %+v", raw, got, want)
		}
	}
	for raw, fault := range map[string]string{
		`[]`:                             "not a StepOptions JSON",
		`{"retry":1}`:                    "not a StepOptions JSON",
		`{"retry":{"attempts":-4}}`:      "retry attempts -4",
		`{"retry":{"backoff":"random"}}`: "retry backoff",
	} {
		if _, err := DecodeStepOptions([]byte(raw)); err == nil || !strings.Contains(err.Error(), fault) {
			t.Errorf("%q: error %v, want one containing %q", raw, err, fault)
		}
	}
}

func TestDecodeWaitOptions(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]WaitOptions{
		`{"event":"verify"}`:                                      {Event: "verify"},
		`{"event":"verify","match":null}`:                         {Event: "verify"},
		`{"event":"verify","match":{"a":[1]},"timeoutMs":5}`:      {Event: "verify", Match: json.RawMessage(`{"a":[1]}`), TimeoutMs: 5},
		`{"event":"verify","timeoutMs":9223372036854775807}`:      {Event: "verify", TimeoutMs: MaxDelay.Milliseconds()},
		`{"event":"verify","match": {"b":true} ,"timeoutMs":0}`:   {Event: "verify", Match: json.RawMessage(`{"b":true}`)},
		`{"event":"verify","timeoutMs":3153600000000,"extra":[]}`: {Event: "verify", TimeoutMs: 3153600000000},
	} {
		got, err := DecodeWaitOptions([]byte(raw))
		if err != nil {
			t.Errorf("%q: %v", raw, err)
			continue
		}
		if got.Event != want.Event || string(got.Match) != string(want.Match) || got.TimeoutMs != want.TimeoutMs {
			t.Errorf("%q: %+v, want %+v", raw, got, want)
		}
	}
	for raw, fault := range map[string]string{
		``:                                         "not a WaitOptions JSON",
		`{"event":7}`:                              "not a WaitOptions JSON",
		`{}`:                                       "event name is empty",
		`{"event":"a/b"}`:                          `contains "/"`,
		`{"event":"e","match":[1]}`:                "match must be a JSON object",
		`{"event":"e","match":"x"}`:                "match must be a JSON object",
		`{"event":"e","timeoutMs":-1}`:             "timeoutMs must not be negative",
		`{"event":"e","match":{"a":"\u0000"}}`:     "match cannot be stored",
		`{"event":"e","match":{"n":1e1001}}`:       "match cannot be stored",
		`{"event":"e","match":{"a":"\ud800"}}`:     "match cannot be stored",
		"{\"event\":\"e\",\"match\":{\"\xff\":1}}": "match cannot be stored",
	} {
		_, err := DecodeWaitOptions([]byte(raw))
		if err == nil || !strings.Contains(err.Error(), fault) {
			t.Errorf("%q: error %v, want one containing %q", raw, err, fault)
			continue
		}
		// Only a match no store keeps is not_storable; every other fault is a broken call.
		if errors.Is(err, ErrNotStorable) != strings.HasPrefix(fault, "match cannot be stored") {
			t.Errorf("%q: errors.Is(ErrNotStorable) = %v", raw, errors.Is(err, ErrNotStorable))
		}
	}
}

func TestDecodeErrorInfo(t *testing.T) {
	t.Parallel()
	cases := map[string]ErrorInfo{
		`{"code":"card_declined","message":"no","nonRetryable":true,"details":{"k":1}}`: {
			Code: "card_declined", Message: "no", NonRetryable: true, Details: json.RawMessage(`{"k":1}`)},
		`{"message":"no code"}`:         {Code: CodeWorkflowError, Message: "no code"},
		`{"code":"only_code"}`:          {Code: "only_code"},
		`not json at all`:               {Code: CodeWorkflowError, Message: "not json at all"},
		`{"nonRetryable":true}`:         {Code: CodeWorkflowError, Message: `{"nonRetryable":true}`},
		`"a string"`:                    {Code: CodeWorkflowError, Message: `"a string"`},
		``:                              {Code: CodeWorkflowError},
		"bad \xff and \x00 bytes":       {Code: CodeWorkflowError, Message: "bad \uFFFD and \uFFFD bytes"},
		`{"message":"nul \u0000 here"}`: {Code: CodeWorkflowError, Message: "nul \uFFFD here"},
		`{"message":"m","details":{"a":"\u0000"}}`: {Code: CodeWorkflowError, Message: "m"},
	}
	for raw, want := range cases {
		got := DecodeErrorInfo([]byte(raw))
		if got.Code != want.Code || got.Message != want.Message || got.NonRetryable != want.NonRetryable || string(got.Details) != string(want.Details) {
			t.Errorf("%q: %+v, want %+v", raw, got, want)
		}
		// What the host hands on, encoded, reads back as itself: the engine decodes it again.
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if again := DecodeErrorInfo(b); again.Code != got.Code || again.Message != got.Message || again.NonRetryable != got.NonRetryable || string(again.Details) != string(got.Details) {
			t.Errorf("%q: decoded %+v, its encoding decodes to %+v", raw, got, again)
		}
	}
	// ParseErrorInfo is the same reading before the text is made storable.
	if got := ParseErrorInfo([]byte("a\x00b")); got.Message != "a\x00b" || got.Code != CodeWorkflowError {
		t.Errorf("ParseErrorInfo kept %+v", got)
	}
}

func TestDecodeDescription(t *testing.T) {
	t.Parallel()
	ok := `{"workflows":[{"name":"a","version":"1","retentionDays":2147483647,` +
		`"retry":{"attempts":1000,"backoff":"linear","baseMs":3153600000000,"maxMs":3153600000000,"jitter":1},` +
		`"triggers":["user.signed_up"]},{"name":"a","version":"2"},{"name":"b","version":"1","future":true}]}`
	d, err := DecodeDescription([]byte(ok))
	if err != nil || len(d.Workflows) != 3 || d.Workflows[0].Retry.Attempts != 1000 {
		t.Fatalf("%+v %v", d, err)
	}
	// wf is one workflow with extra fields; a second "version" replaces the first (the later key wins).
	wf := func(fields string) string { return `{"workflows":[{"name":"w","version":"1"` + fields + `}]}` }
	for raw, fault := range map[string]string{
		`{`:                               "describe returned invalid JSON",
		`{"workflows":[]}`:                "declares no workflow",
		`{"workflows":[{"version":"1"}]}`: "workflow name is empty",
		`{"workflows":[{"name":"a#1","version":"1"}]}`:                          `contains "#"`,
		`{"workflows":[{"name":"w"}]}`:                                          `workflow "w": version is empty`,
		wf(`,"version":"1\u0000"`):                                              "NUL",
		wf(`,"version":"` + strings.Repeat("v", MaxNameLen+1) + `"`):            "the limit is 200",
		`{"workflows":[{"name":"w","version":"1"},{"name":"w","version":"1"}]}`: "declared twice",
		wf(`,"retentionDays":-1`):                                               "retentionDays -1 out of range",
		wf(`,"retentionDays":2147483648`):                                       "retentionDays 2147483648 out of range",
		wf(`,"retry":{"attempts":1001}`):                                        "retry attempts 1001",
		wf(`,"retry":{"maxMs":-1}`):                                             "retry delays must not be negative",
		wf(`,"retry":{"jitter":1.5}`):                                           "retry jitter",
		wf(`,"triggers":["ok","bad/one"]`):                                      `trigger event name "bad/one"`,
		wf(`,"triggers":[""]`):                                                  "trigger event name is empty",
	} {
		if _, err := DecodeDescription([]byte(raw)); err == nil || !strings.Contains(err.Error(), fault) {
			t.Errorf("%.80q: error %v, want one containing %q", raw, err, fault)
		}
	}
}

// No policy yields a negative or overflowing delay, nor one past MaxDelay. Before the clamp,
// {fixed, baseMs: 2^62} validated and its delay wrapped to minus 292 years: the retry was due
// at once, over and over.
func TestRetryDelayWithinBounds(t *testing.T) {
	t.Parallel()
	for _, p := range []RetryPolicy{
		{Attempts: 3, Backoff: BackoffFixed, BaseMs: 1 << 62, MaxMs: 1 << 62, Jitter: 1},
		{Attempts: 3, Backoff: BackoffFixed, BaseMs: math.MaxInt64, Jitter: 1},
		{Attempts: 3, Backoff: BackoffLinear, BaseMs: MaxDelay.Milliseconds(), Jitter: 1},
		{Attempts: 3, Backoff: BackoffExp, BaseMs: 1, MaxMs: math.MaxInt64, Jitter: 1},
		{Attempts: 3, Backoff: BackoffExp, BaseMs: math.MaxInt64, Jitter: 1},
	} {
		if err := p.Validate(); err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		for _, failed := range []int{1, 2, 64, MaxAttempts} {
			for _, r := range []float64{0, 0.5, math.Nextafter(1, 0)} {
				if d := p.Delay(failed, r); d < 0 || d > MaxDelay {
					t.Errorf("%+v after %d failures, r=%v: %v", p, failed, r, d)
				}
			}
		}
	}
}

func TestDecodeChildRun(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]ChildRun{
		`{"workflow":"w"}`:               {Workflow: "w", Input: json.RawMessage("null"), ParentClose: ParentCloseCancel},
		`{"workflow":"w","detach":true}`: {Workflow: "w", Input: json.RawMessage("null"), Detach: true, ParentClose: ParentCloseAbandon},
		`{"workflow":"w","detach":true,"parentClose":"cancel","input":{"n":1}}`: {Workflow: "w", Input: json.RawMessage(`{"n":1}`), Detach: true, ParentClose: ParentCloseCancel},
		`{"workflow":"w","version":"2","id":"kid-1","timeoutMs":9223372036854775807,"parentClose":"abandon","extra":1}`: {Workflow: "w", Version: "2", ID: "kid-1",
			Input: json.RawMessage("null"), TimeoutMs: MaxDelay.Milliseconds(), ParentClose: ParentCloseAbandon},
	} {
		got, err := DecodeChildRun([]byte(raw))
		if err != nil {
			t.Errorf("%q: %v", raw, err)
			continue
		}
		if got.Workflow != want.Workflow || got.Version != want.Version || got.ID != want.ID || string(got.Input) != string(want.Input) ||
			got.TimeoutMs != want.TimeoutMs || got.Detach != want.Detach || got.ParentClose != want.ParentClose {
			t.Errorf("%q: %+v, want %+v", raw, got, want)
		}
	}
	for raw, fault := range map[string]string{
		``:                        "not a ChildRun JSON",
		`[]`:                      "not a ChildRun JSON",
		`{"workflow":7}`:          "not a ChildRun JSON",
		`{}`:                      "workflow name is empty",
		`{"workflow":"a/b"}`:      `contains "/"`,
		"{\"workflow\":\"\xff\"}": "not valid UTF-8",
		`{"workflow":"w","version":"` + strings.Repeat("v", 201) + `"}`: "version: want at most 200 bytes",
		`{"workflow":"w","id":"a#1"}`:                                   `contains "#"`,
		`{"workflow":"w","timeoutMs":-5}`:                               "timeoutMs -5 is negative",
		`{"workflow":"w","parentClose":"x"}`:                            `parentClose "x"`,
		`{"workflow":"w","input":{"a":"\u0000"}}`:                       "input: ",
		`{"workflow":"w","input":{"a":"\ud800"}}`:                       "input: ",
	} {
		_, err := DecodeChildRun([]byte(raw))
		if err == nil || !strings.Contains(err.Error(), fault) {
			t.Errorf("%q: error %v, want one containing %q", raw, err, fault)
			continue
		}
		// Only an input no store keeps is not_storable; every other fault is a broken call.
		if errors.Is(err, ErrNotStorable) != (fault == "input: ") {
			t.Errorf("%q: errors.Is(ErrNotStorable) = %v", raw, errors.Is(err, ErrNotStorable))
		}
	}
}
