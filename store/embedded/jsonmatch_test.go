package embedded

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/internal/testenv"
)

// The cases follow the examples and rules of Postgres's jsonb containment documentation; each
// was checked against `SELECT doc::jsonb @> sub::jsonb` on the Postgres the tests use
// (TestContainsAgreesWithPostgres does that on every run).
var containmentCases = []struct {
	doc, sub string
	want     bool
}{
	{`"foo"`, `"foo"`, true},
	{`"foo"`, `"bar"`, false},
	{`1`, `1.0`, true},
	{`1e2`, `100`, true},
	{`1`, `"1"`, false},
	{`null`, `null`, true},
	{`true`, `true`, true},
	{`true`, `false`, false},
	{`[1, 2, 3]`, `[1, 3]`, true},
	{`[1, 2, 3]`, `[3, 1]`, true},
	{`[1, 2, 3]`, `[1, 2, 2]`, true},
	{`[1, 2, 3]`, `[]`, true},
	{`[1, 2, [1, 3]]`, `[1, 3]`, false},
	{`[1, 2, [1, 3]]`, `[[1, 3]]`, true},
	{`[1, 2, [1, 3]]`, `[[3]]`, true},
	{`[[1, 2]]`, `[1]`, false},
	{`{"product": "PostgreSQL", "version": 9.4, "jsonb": true}`, `{"version": 9.4}`, true},
	{`{"foo": {"bar": "baz"}}`, `{"bar": "baz"}`, false},
	{`{"foo": {"bar": "baz"}}`, `{"foo": {}}`, true},
	{`{"a": 1}`, `{}`, true},
	{`{}`, `{"a": 1}`, false},
	{`{"a": [1, 2]}`, `{"a": [2]}`, true},
	{`{"a": [1, 2]}`, `{"a": 2}`, false},
	{`["foo", "bar"]`, `"foo"`, true},
	{`["foo", "bar"]`, `"baz"`, false},
	{`"foo"`, `["foo"]`, false},
	{`[{"a": 1, "b": 2}]`, `[{"a": 1}]`, true},
	{`[{"a": 1}]`, `[{"a": 1, "b": 2}]`, false},
	{`{"a": 1}`, `[{"a": 1}]`, false},
	{`[{"a": 1}]`, `{"a": 1}`, false},
	{`{"color":"red","dim":{"w":1,"h":2},"extra":[1]}`, `{"color":"red","dim":{"w":1}}`, true},
	{`{"color":"red","dim":{"w":2}}`, `{"color":"red","dim":{"w":1}}`, false},
	{`{"a": null}`, `{"a": null}`, true},
	{`{"b": 1}`, `{"a": null}`, false},
	{`[[1, [2]]]`, `[[[2]]]`, true},
}

func TestContains(t *testing.T) {
	for _, c := range containmentCases {
		got, err := contains([]byte(c.doc), []byte(c.sub))
		if err != nil {
			t.Fatalf("%s @> %s: %v", c.doc, c.sub, err)
		}
		if got != c.want {
			t.Errorf("%s @> %s = %v, want %v", c.doc, c.sub, got, c.want)
		}
		m, err := newMatcher([]byte(c.sub))
		if err != nil {
			t.Fatal(err)
		}
		if m.match([]byte(c.doc)) != c.want {
			t.Errorf("matcher: %s @> %s = %v, want %v", c.doc, c.sub, !c.want, c.want)
		}
	}
	if _, err := contains([]byte(`{"a":`), []byte(`{}`)); err == nil {
		t.Error("invalid JSON accepted")
	}
}

// TestContainsAgreesWithPostgres asks the test Postgres for every case: the embedded store's
// matching must be Postgres's, not this file's reading of its documentation.
func TestContainsAgreesWithPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Postgres")
	}
	conn, err := pgx.Connect(t.Context(), testenv.DatabaseURL())
	if err != nil {
		t.Fatalf("connect to the test Postgres: %v", err)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	for _, c := range containmentCases {
		var pg bool
		if err := conn.QueryRow(t.Context(), `SELECT $1::jsonb @> $2::jsonb`, c.doc, c.sub).Scan(&pg); err != nil {
			t.Fatalf("%s @> %s: %v", c.doc, c.sub, err)
		}
		got, _ := contains([]byte(c.doc), []byte(c.sub))
		if got != pg {
			t.Errorf("%s @> %s: embedded %v, Postgres %v", c.doc, c.sub, got, pg)
		}
	}
}
