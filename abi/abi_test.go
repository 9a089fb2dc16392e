package abi

import (
	"encoding/json"
	"testing"
	"time"
)

func TestPackReplyRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s Status
		n uint32
	}{{StatusOK, 0}, {StatusExecute, 0}, {StatusStepFailed, 123}, {StatusTimeout, 0}, {StatusOK, 1<<32 - 1}, {Status(-7), 5}} {
		s, n := UnpackReply(PackReply(c.s, c.n))
		if s != c.s || n != c.n {
			t.Errorf("PackReply(%v, %d) unpacked to (%v, %d)", c.s, c.n, s, n)
		}
	}
	ptr, n := UnpackPtrLen(PackPtrLen(0xfffffff0, 0x10))
	if ptr != 0xfffffff0 || n != 0x10 {
		t.Errorf("PackPtrLen round trip gave %x %x", ptr, n)
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	exp := RetryPolicy{Attempts: 10, Backoff: BackoffExp, BaseMs: 1000, MaxMs: 60000}
	lin := RetryPolicy{Attempts: 10, Backoff: BackoffLinear, BaseMs: 500, MaxMs: 2000}
	fixed := RetryPolicy{Attempts: 10, Backoff: BackoffFixed, BaseMs: 10, MaxMs: 60000}
	cases := []struct {
		p      RetryPolicy
		failed int
		want   time.Duration
	}{
		{exp, 1, time.Second}, {exp, 2, 2 * time.Second}, {exp, 3, 4 * time.Second},
		{exp, 7, 60 * time.Second}, {exp, 500, 60 * time.Second}, // capped, and no overflow
		{lin, 1, 500 * time.Millisecond}, {lin, 3, 1500 * time.Millisecond}, {lin, 9, 2 * time.Second},
		{fixed, 1, 10 * time.Millisecond}, {fixed, 8, 10 * time.Millisecond},
	}
	for _, c := range cases {
		// r = 0.5 makes the jitter term zero whatever the jitter fraction.
		if got := c.p.Delay(c.failed, 0.5); got != c.want {
			t.Errorf("%s after %d failures: %v, want %v", c.p.Backoff, c.failed, got, c.want)
		}
	}
	j := RetryPolicy{Backoff: BackoffFixed, BaseMs: 1000, MaxMs: 1000, Jitter: 0.2}
	if lo, hi := j.Delay(1, 0), j.Delay(1, 0.999999); lo != 800*time.Millisecond || hi < 1199*time.Millisecond || hi > 1200*time.Millisecond {
		t.Errorf("20%% jitter spans %v..%v, want 800ms..1200ms", lo, hi)
	}
}

func TestRetryMergeAndValidate(t *testing.T) {
	t.Parallel()
	p := RetryPolicy{Attempts: 5}.Merge(DefaultRetry())
	if p.Attempts != 5 || p.Backoff != BackoffExp || p.BaseMs != 1000 || p.MaxMs != 60000 || p.Jitter != 0.2 {
		t.Fatalf("merge gave %+v", p)
	}
	for _, bad := range []RetryPolicy{{Attempts: -1}, {Attempts: MaxAttempts + 1}, {Backoff: "random"}, {BaseMs: -1}, {Jitter: 1.5}, {OnExhausted: "retry"}, {OnExhausted: "\xff"}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	if err := DefaultRetry().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestErrorInfoJSON(t *testing.T) {
	t.Parallel()
	in := ErrorInfo{Code: "card_declined", Message: "declined", NonRetryable: true, Details: json.RawMessage(`{"k":1}`)}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out ErrorInfo
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Code != in.Code || out.Message != in.Message || !out.NonRetryable || string(out.Details) != `{"k":1}` {
		t.Fatalf("round trip gave %+v", out)
	}
	if out.Error() != "card_declined: declined" {
		t.Fatalf("Error() = %q", out.Error())
	}
}

func FuzzRetryDelayNeverNegativeOrOverMax(f *testing.F) {
	f.Add(3, "exp", int64(1000), int64(60000), 0.2, 2, 0.3)
	f.Fuzz(func(t *testing.T, attempts int, backoff string, base, maxMs int64, jitter float64, failed int, r float64) {
		p := RetryPolicy{Attempts: attempts, Backoff: Backoff(backoff), BaseMs: base, MaxMs: maxMs, Jitter: jitter}
		if p.Validate() != nil || failed < 1 || r < 0 || r >= 1 || maxMs == 0 || base > 1<<40 {
			return
		}
		d := p.Delay(failed, r)
		if d < 0 || float64(d) > float64(maxMs)*float64(time.Millisecond)*(1+jitter)+1 {
			t.Fatalf("%+v after %d: %v", p, failed, d)
		}
	})
}
