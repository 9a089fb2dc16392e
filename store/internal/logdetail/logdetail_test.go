package logdetail

import (
	"testing"
)

func TestNormalizeTimesFromEitherStore(t *testing.T) {
	for in, want := range map[string]string{
		`{"until":"2026-11-28T23:40:00.123456+00:00","why":"sleep"}`: `{"until":"2026-11-28T23:40:00.123456Z","why":"sleep"}`,
		`{"until":1795909200123456,"why":"sleep"}`:                   `{"until":"2026-11-28T23:40:00.123456Z","why":"sleep"}`,
		`{"graceUntil":"2026-11-29T01:40:00+02:00"}`:                 `{"graceUntil":"2026-11-28T23:40:00.000000Z"}`,
		`{"step":"a"}`: `{"step":"a"}`,
	} {
		got, err := Normalize([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("Normalize(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if got, err := Normalize(nil); got != nil || err != nil {
		t.Errorf("Normalize(nil) = %s, %v", got, err)
	}
}

func TestNormalizeRefusesWhatNoTriggerWrites(t *testing.T) {
	for _, in := range []string{`[1]`, `{"until":true}`, `{"until":"yesterday"}`, "{\"until\":\"\xff\"}", `{`} {
		if got, err := Normalize([]byte(in)); err == nil {
			t.Errorf("Normalize(%q) = %s, want an error", in, got)
		}
	}
}
