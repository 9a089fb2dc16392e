package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// Fail-fast checks written with the standard library: the suite takes no assertion library.

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want %v", err, target)
	}
}

func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func check(t *testing.T, cond bool, format string, args ...any) {
	t.Helper()
	if !cond {
		t.Fatalf(format, args...)
	}
}

// equalJSON compares JSON by value: stores may reformat what they keep (Postgres jsonb does).
// An empty want means no JSON at all.
func equalJSON(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	if want == "" {
		if len(got) != 0 {
			t.Fatalf("%s: got %s, want nothing", what, got)
		}
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: got invalid JSON %q: %v", what, got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expected JSON %q: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: got %s, want %s", what, got, want)
	}
}

func equalTime(t *testing.T, what string, got, want *time.Time) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil:
		t.Fatalf("%s: got %v, want %v", what, got, want)
	case !got.Equal(*want):
		t.Fatalf("%s: got %v, want %v", what, *got, *want)
	}
}

// equalStep compares journal rows field by field, JSON by value and times by instant.
func equalStep(t *testing.T, got, want store.Step) {
	t.Helper()
	what := "step " + want.Key + " "
	equal(t, what+"run id", got.RunID, want.RunID)
	equal(t, what+"seq", got.Seq, want.Seq)
	equal(t, what+"key", got.Key, want.Key)
	equal(t, what+"kind", got.Kind, want.Kind)
	equal(t, what+"status", got.Status, want.Status)
	equalJSON(t, what+"output", got.Output, string(want.Output))
	equalJSON(t, what+"match", got.Match, string(want.Match))
	check(t, reflect.DeepEqual(errorValue(got.Error), errorValue(want.Error)), "%serror: got %+v, want %+v", what, got.Error, want.Error)
	equal(t, what+"attempt", got.Attempt, want.Attempt)
	equalTime(t, what+"wake at", got.WakeAt, want.WakeAt)
	equal(t, what+"event", got.Event, want.Event)
	check(t, (got.EventID == nil) == (want.EventID == nil) && (got.EventID == nil || *got.EventID == *want.EventID),
		"%sevent id: got %v, want %v", what, got.EventID, want.EventID)
	equalTime(t, what+"started at", &got.StartedAt, &want.StartedAt)
	equalTime(t, what+"completed at", got.CompletedAt, want.CompletedAt)
}

// errorValue normalises an ErrorInfo for comparison (its Details are JSON).
func errorValue(e *abi.ErrorInfo) any {
	if e == nil {
		return nil
	}
	b, _ := json.Marshal(e)
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

// sameBytes reports byte equality with a readable failure.
func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: got %d bytes %q, want %d bytes %q", what, len(got), got, len(want), want)
	}
}
