package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/abi"
)

// pgValues are JSON values whose jsonb rendering the redaction must know: numbers Postgres
// prints differently from how they were written, keys it reorders and deduplicates, strings it
// escapes its own way.
var pgValues = []string{
	`1.2345678e7`, `1.50e1`, `-0`, `-0.0`, `0.000`, `1e-5`, `1E+2`, `123.4500`, `-1.5e-3`, `12e-1`,
	`0.00012e2`, `5e0`, `1e300`, `-7.25E-10`, `100`, `1e100`,
	`{"b": 1, "a": 2, "aa": [1, 2.50, {"z": null, "y": true}], "a": 3}`,
	`["a\u0001\b\f\n\r\t\"\\\/ é 😀 \u2028 <&>"]`,
	`{}`, `[]`, `""`, `"x"`, `null`, `false`,
}

// TestPgRenderMatchesPostgres holds pgRender to the Postgres it mirrors.
func TestPgRenderMatchesPostgres(t *testing.T) {
	url := os.Getenv("TEST_DATABASE_URL")
	if url == "" {
		url = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, v := range pgValues {
		var want string
		if err := conn.QueryRow(ctx, "SELECT $1::text::jsonb::text", v).Scan(&want); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if got := string(pgRender([]byte(v))); got != want {
			t.Errorf("pgRender(%s) = %s, Postgres says %s", v, got, want)
		}
	}
}

func stateWith(secrets ...string) *state {
	st := newDescribeState()
	for _, s := range secrets {
		st.secrets = append(st.secrets, []byte(s))
	}
	return st
}

func TestRedactJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		secret, in, want string
	}{
		{"sk_live_123456", `{"a":"x sk_live_123456 y"}`, `{"a":"x [redacted] y"}`},
		{"sk_live_123456", `{"\u0073k_live_123456":1}`, `{"[redacted]":1}`},
		{"sk_live_123456", `"\u0073\u006B_live_123456"`, `"[redacted]"`},
		{"nothing", `{"a": "b" , "c":[1, 2]}`, `{"a": "b" , "c":[1, 2]}`},
		// A number that Postgres prints back as the secret.
		{"12345678", `{"n": 1.2345678e7}`, `{"n": "[redacted]"}`},
		{"12345678", `[0.0012345678e4]`, `["[redacted]"]`},
		// A secret that spans tokens, as written or as Postgres or encoding/json render it.
		{`a","b":"c`, `{"x":["a","b":"c"]}`, `"[redacted]"`},
		{`"b": 1, "c`, `{"c":2, "b":1}`, `"[redacted]"`},
		{`[1,2,3,4]`, `[1, 2, 3, 4]`, `"[redacted]"`},
		// A string whose escaped form shows the secret though its decoded form does not.
		{`nbcdefgh`, `"a\nbcdefgh"`, `"[redacted]"`},
		{`u003cscript`, `"<script"`, `"[redacted]"`},
	} {
		st := stateWith(c.secret)
		if got := string(st.redactJSON([]byte(c.in))); got != c.want {
			t.Errorf("secret %q: redactJSON(%s) = %s, want %s", c.secret, c.in, got, c.want)
		}
	}
}

func TestRedactText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		secrets  []string
		in, want string
	}{
		{[]string{"sk_live_123456"}, "the key is sk_live_123456.", "the key is [redacted]."},
		// The longer secret first: the shorter one inside it must not leave the rest behind.
		{[]string{"live_1234", "sk_live_123456"}, "k=sk_live_123456", "k=[redacted]"},
		// A replacement that completes another secret around the marker.
		{[]string{"abcdefgh", "ed]tail-xyz"}, "abcdefghtail-xyz", "[redact[redacted]"},
		// Escaping by a log writer would show the secret: the whole text goes.
		{[]string{`"quoted`}, `say "quoted`, "say [redacted]"},
		{[]string{`"quoted`}, `quoted word`, abi.Redacted}, // slog's text handler quotes it
		{[]string{`nsecret9`}, "a\nsecret9", abi.Redacted},
	} {
		st := stateWith(c.secrets...)
		if got := st.redactText(c.in); got != c.want {
			t.Errorf("secrets %q: redactText(%q) = %q, want %q", c.secrets, c.in, got, c.want)
		}
	}
}

// FuzzRedactJSON: whatever storable JSON a guest writes, the redacted value is storable and
// shows no secret as written, decoded, compacted or rendered by Postgres.
func FuzzRedactJSON(f *testing.F) {
	for _, v := range pgValues {
		f.Add(v, "sk_live_123456")
	}
	f.Add(`{"\u0073k_live_123456": ["\u0073\u006B_live_123456", 1]}`, "sk_live_123456")
	f.Add(`{"n": 1.2345678e7, "m": [12345678]}`, "12345678")
	f.Add(`{"a":"b","c":"d"}`, `b","c`)
	f.Add(`["a\u000Abcdefgh"]`, "nbcdefgh")
	f.Fuzz(func(t *testing.T, doc, secret string) {
		if abi.CheckJSON([]byte(doc)) != nil || len(secret) < abi.MinSecretBytes || strings.Contains(`"`+abi.Redacted+`"`, secret) {
			return
		}
		st := stateWith(secret)
		out := st.redactJSON([]byte(doc))
		if err := abi.CheckJSON(out); err != nil {
			t.Fatalf("redactJSON(%s) = %s, not storable: %v", doc, out, err)
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, out)
		forms := []string{string(out), compact.String(), string(pgRender(out))}
		var v any
		_ = json.Unmarshal(out, &v)
		forms = append(forms, flattenStrings(v)...)
		for _, f := range forms {
			if strings.Contains(f, secret) {
				t.Fatalf("secret %q in %q (redactJSON(%s) = %s)", secret, f, doc, out)
			}
		}
	})
}

func flattenStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, flattenStrings(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for k, e := range v {
			out = append(append(out, k), flattenStrings(e)...)
		}
		return out
	}
	return nil
}

// FuzzRedactText: redacted text shows no secret as it is or as any writer renders it.
func FuzzRedactText(f *testing.F) {
	f.Add("the key is sk_live_123456", "sk_live_123456")
	f.Add("a\nbcdefgh", "nbcdefgh")
	f.Add("abcdefghtail-xyz", "ed]tail-xyz")
	f.Add(`x "quoted y`, `"quoted y`)
	f.Fuzz(func(t *testing.T, text, secret string) {
		if len(secret) < abi.MinSecretBytes || strings.Contains(`"`+abi.Redacted+`"`, secret) {
			return
		}
		st := stateWith(secret)
		out := st.redactText(text)
		for _, f := range append(renderings(out), out) {
			if strings.Contains(f, secret) {
				t.Fatalf("secret %q in %q (redactText(%q) = %q)", secret, f, text, out)
			}
		}
	})
}

// BenchmarkRedactJSON: a 64 KiB step output, with and without a secret in it, for a pass that
// read one secret.
func BenchmarkRedactJSON(b *testing.B) {
	var doc strings.Builder
	doc.WriteString(`{"items": [`)
	for i := 0; doc.Len() < 64<<10; i++ {
		fmt.Fprintf(&doc, `{"id": %d, "name": "item number %d", "tags": ["a", "b\n"], "price": 12.5},`, i, i)
	}
	doc.WriteString(`{"last": "x"}]}`)
	clean := []byte(doc.String())
	dirty := []byte(strings.Replace(doc.String(), "item number 7", `\u0073k_live_123456`, 1))
	ascii := []byte(strings.ReplaceAll(doc.String(), `\n`, "c"))
	for name, in := range map[string][]byte{"clean": clean, "with-secret": dirty, "no-escapes": ascii} {
		b.Run(name, func(b *testing.B) {
			st := stateWith("sk_live_123456")
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				st.redactJSON(in)
			}
		})
	}
}

// FuzzDecodeJSONString holds decodeJSONString to encoding/json on every storable string.
func FuzzDecodeJSONString(f *testing.F) {
	for _, s := range []string{`"a\u0041\n\"\\\/\b\f\r\t"`, `"\ud83d\ude00 é"`, `"\uD83D\uDE00"`, `""`, `"plain"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' || abi.CheckJSON([]byte(tok)) != nil {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(tok), &want); err != nil {
			return
		}
		if got := decodeJSONString([]byte(tok[1 : len(tok)-1])); got != want {
			t.Fatalf("decodeJSONString(%s) = %q, encoding/json says %q", tok, got, want)
		}
	})
}
