package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
	"github.com/wfhost/wfhost/store/postgres"
)

// The leak matrix: the probe module (examples/wasm/go/probe) reads a tenant secret and writes
// it into every place a run writes, in every encoding, and the test looks for the plaintext in
// everything the daemon keeps or shows: every API answer about the runs (runs, steps with their
// outbound audit, the run list), every row of the run tables in the store (both stores, dumped
// with raw SQL, JSON decoded), the daemon's logs (JSON and text), the trace spans (in-memory
// exporter) and the metrics.

// leakEnv is a daemon in the test: the API over an engine on one of the stores, with its logs,
// spans and metrics caught.
type leakEnv struct {
	srv     *httptest.Server
	token   string
	logs    *syncBuffer
	spans   *tracetest.InMemoryExporter
	dumpAll func(t *testing.T) []string // every row of the run tables, each as text
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fanout hands every record to each handler: the daemon's logs in both of its formats.
type fanout []slog.Handler

func (f fanout) Enabled(context.Context, slog.Level) bool { return true }

func (f fanout) Handle(ctx context.Context, r slog.Record) error {
	for _, h := range f {
		_ = h.Handle(ctx, r.Clone())
	}
	return nil
}

func (f fanout) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithAttrs(attrs)
	}
	return out
}

func (f fanout) WithGroup(name string) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithGroup(name)
	}
	return out
}

// runTables are the tables a run writes to, and the secrets table.
var runTables = []string{"runs", "steps", "events", "outbound", "secrets"}

// allowed is the allowlist entry of the server the matrix lets requests reach (host:port).
func newLeakEnv(t *testing.T, backend, allowed string) *leakEnv {
	t.Helper()
	ctx := context.Background()
	var (
		st   store.Store
		dump func(t *testing.T) []string
	)
	switch backend {
	case "postgres":
		schema := testenv.Schema(t, "wfhost_leak")
		pg, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: schema, MaxConns: 6})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pg.Close)
		if err := pg.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		st = pg
		dump = func(t *testing.T) []string { return dumpPostgres(t, schema) }
	case "embedded":
		dir := t.TempDir()
		emb, err := embedded.Open(ctx, embedded.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(emb.Close)
		st = emb
		dump = func(t *testing.T) []string { return dumpSQLite(t, filepath.Join(dir, embedded.DBFile)) }
	}
	logs := &syncBuffer{}
	log := slog.New(fanout{
		slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}),
		slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}),
	})
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans), sdktrace.WithIDGenerator(engine.TraceIDGenerator()))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	reg := prometheus.NewRegistry()
	eng, err := engine.New(engine.Config{
		Store: st, Runtime: testenv.Runtime(t), Logger: log, Metrics: reg, TracerProvider: tp,
		LeaseFor: 3 * time.Second, PollInterval: 200 * time.Millisecond, SecretKeys: testenv.SecretKeys(t),
		AllowPrivateHosts: true, HTTPTimeout: 2 * time.Second,
		TenantDefaults: store.Limits{AllowedHosts: []string{allowed, "*.invalid"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	const token = "leak-matrix-token"
	if err := eng.EnsureToken(ctx, store.DefaultTenant, token, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Deploy(ctx, store.DefaultTenant, testenv.Fixture(t, "probe.wasm"), false); err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Config{Service: eng.Service, Store: st, Logger: log, Gatherer: reg}))
	t.Cleanup(func() {
		srv.Close()
		eng.Stop()
	})
	return &leakEnv{srv: srv, token: token, logs: logs, spans: spans, dumpAll: dump}
}

func dumpPostgres(t *testing.T, schema string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.DatabaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// bytea in escape format: a value kept in plaintext shows as text.
	if _, err := conn.Exec(ctx, "SET bytea_output = 'escape'; SET search_path TO "+pgx.Identifier{schema}.Sanitize(), pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, table := range runTables {
		// Every column as text: jsonb as Postgres prints it.
		rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT string_agg(coalesce(value, ''), ' | ') FROM %s t, jsonb_each_text(to_jsonb(t)) GROUP BY t.ctid`, table))
		if err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		for rows.Next() {
			var row string
			if err := rows.Scan(&row); err != nil {
				t.Fatal(err)
			}
			out = append(out, table+": "+row)
		}
		rows.Close()
	}
	return out
}

func dumpSQLite(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []string
	for _, table := range runTables {
		rows, err := db.Query("SELECT * FROM " + table)
		if err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				parts = append(parts, fmt.Sprint(v))
			}
			out = append(out, table+": "+strings.Join(parts, " | "))
		}
		rows.Close()
	}
	return out
}

// leakCell is one run of the probe: the cells it covers and how it must end.
type leakCell struct {
	desc   string
	input  map[string]any
	cells  int
	status string
	marked bool // its run's answers must show [redacted]
}

// leakCells is the matrix for the two secrets (a plain one, one with every character a writer
// escapes) and the URL of an allowed server.
func leakCells(plain, wild, serverURL string) []leakCell {
	var out []leakCell
	add := func(secretName, where, enc string, extra map[string]any, cells int, status string, marked bool) {
		in := map[string]any{"secret": secretName, "where": where, "enc": enc, "url": serverURL}
		for k, v := range extra {
			in[k] = v
		}
		out = append(out, leakCell{desc: fmt.Sprintf("%s/%s/%s", where, enc, secretName), input: in, cells: cells, status: status, marked: marked})
	}
	for _, s := range []string{"plain", "wild"} {
		for _, where := range []string{"step-output", "step-error", "run-output", "run-error", "wait-match", "wait-event"} {
			for _, enc := range []string{"raw", "std", "u", "u-mixed"} {
				if s == "wild" && enc == "raw" && where != "step-error" && where != "run-error" {
					continue // not JSON (an error that is not JSON is kept as text, and is in)
				}
				status := "completed"
				if where == "run-error" {
					status = "failed"
				}
				add(s, where, enc, nil, 1, status, true)
			}
		}
		for _, where := range []string{"step-name", "sleep-name", "wait-name"} {
			add(s, where, "raw", nil, 1, "completed", true)
		}
		secretLen := len(plain)
		if s == "wild" {
			secretLen = len(wild)
		}
		var offsets []int
		for o := 0; o <= secretLen; o++ {
			offsets = append(offsets, o)
		}
		for _, where := range []string{"log", "stdout", "stderr"} {
			add(s, where, "raw", nil, 1, "completed", false)
			add(s, where, "raw", map[string]any{"offsets": offsets}, len(offsets), "completed", false)
		}
		for _, where := range []string{"http-path-refused", "http-path-allowed"} {
			for _, enc := range []string{"raw", "pct", "pct-mixed"} {
				add(s, where, enc, nil, 1, "completed", false)
			}
		}
	}
	// A secret in a host name is a DNS label: the plain one only.
	for _, where := range []string{"http-host-refused", "http-host-allowed"} {
		add("plain", where, "raw", nil, 1, "completed", false)
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TestLeakMatrix runs every cell on both stores and finds the plaintext of neither secret in
// anything the daemon keeps or shows.
func TestLeakMatrix(t *testing.T) {
	t.Parallel()
	// Fresh each run, so nothing else in the process can hold them by chance.
	plain := "sk_live_" + randomHex(12)
	wild := `"qu<o>te&\back é😀 = 'tick' ` + randomHex(4)
	seen := &syncBuffer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(seen, "%s\n", r.URL.Path)
		fmt.Fprintf(w, "you asked for %s", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	for _, backend := range []string{"postgres", "embedded"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			e := newLeakEnv(t, backend, srv.Listener.Addr().String())
			for name, value := range map[string]string{"plain": plain, "wild": wild} {
				body, _ := json.Marshal(map[string]string{"value": value})
				if r := call(t, e.srv, "PUT", "/v1/secrets/"+name, e.token, body); r.status != 200 {
					t.Fatalf("put secret: %d %s", r.status, r.body)
				}
			}
			cells := leakCells(plain, wild, srv.URL)
			total := 0
			runs := map[string]leakCell{}
			for _, c := range cells {
				total += c.cells
				body, _ := json.Marshal(map[string]any{"input": c.input})
				r := call(t, e.srv, "POST", "/v1/workflows/probe/runs", e.token, body)
				if r.status != 201 {
					t.Fatalf("%s: start: %d %s", c.desc, r.status, r.body)
				}
				runs[r.json(t)["id"].(string)] = c
			}
			var answers []string // every API answer, tagged with the cell it is about
			for id, c := range runs {
				run := awaitEnd(t, e, id)
				if run.json(t)["status"] != c.status {
					t.Errorf("%s: run ended %s, want %s: %s", c.desc, run.json(t)["status"], c.status, run.body)
				}
				steps := call(t, e.srv, "GET", "/v1/workflows/probe/runs/"+id+"/steps", e.token, nil)
				mine := string(run.body) + string(steps.body)
				if c.marked && !strings.Contains(strings.Join(append(decodedStrings(mine), mine), "\n"), abi.Redacted) {
					t.Errorf("%s: nothing shows [redacted]: %s", c.desc, mine)
				}
				if strings.HasPrefix(c.input["where"].(string), "http-") && !strings.Contains(string(steps.body), `"outbound":[{`) {
					t.Errorf("%s: no audit record: %s", c.desc, steps.body)
				}
				answers = append(answers, c.desc+": "+string(run.body), c.desc+": "+string(steps.body))
			}
			list := call(t, e.srv, "GET", "/v1/workflows/probe/runs?limit=100", e.token, nil)
			metrics := call(t, e.srv, "GET", "/metrics", "", nil)
			answers = append(answers, "run list: "+string(list.body), "metrics: "+string(metrics.body))

			sources := map[string][]string{
				"API":      answers,
				"database": e.dumpAll(t),
				"logs":     strings.Split(e.logs.String(), "\n"),
				"spans":    spanTexts(e.spans.GetSpans()),
			}
			for source, texts := range sources {
				for _, text := range texts {
					for _, s := range append(decodedStrings(text), text) {
						for name, secret := range map[string]string{"plain": plain, "wild": wild} {
							if strings.Contains(s, secret) {
								t.Errorf("the %s secret is in the %s: %.600s", name, source, text)
							}
							// Not even a part cut at a line's end: the first 6 bytes already say much.
							if source == "logs" && strings.Contains(s, secret[:len(secret)-1]) {
								t.Errorf("the %s secret, less its last byte, is in the %s: %.600s", name, source, text)
							}
						}
					}
				}
			}
			// The allowed server was asked: the cells that reach it did run.
			if !strings.Contains(seen.String(), plain) {
				t.Errorf("the allowed server never saw the plain secret in a path: %s", seen.String())
			}
			t.Logf("%s: %d cells in %d runs; %d API answers, %d rows, %d log lines, %d spans searched",
				backend, total, len(runs), len(answers), len(sources["database"]), len(sources["logs"]), len(sources["spans"]))
		})
	}
}

// awaitEnd waits until the run ends.
func awaitEnd(t *testing.T, e *leakEnv, id string) response {
	t.Helper()
	var r response
	testenv.Await(t, 90*time.Second, func() error {
		r = call(t, e.srv, "GET", "/v1/workflows/probe/runs/"+id, e.token, nil)
		if status, _ := r.json(t)["status"].(string); !wire.RunStatus(status).Ended() {
			return fmt.Errorf("run %s has not ended: %s", id, r.body)
		}
		return nil
	})
	return r
}

// spanTexts are every span's name, status, attributes and events, as text.
func spanTexts(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		parts := []string{s.Name, s.Status.Description}
		for _, a := range s.Attributes {
			parts = append(parts, string(a.Key)+"="+a.Value.Emit())
		}
		for _, ev := range s.Events {
			parts = append(parts, ev.Name)
			for _, a := range ev.Attributes {
				parts = append(parts, string(a.Key)+"="+a.Value.Emit())
			}
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

// decodedStrings are the strings and keys of every JSON value in s (an answer, a row, a log
// line), decoded: an escaped secret is found as a JSON reader would see it.
func decodedStrings(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '{' && s[i] != '[' && s[i] != '"' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var v any
		if dec.Decode(&v) != nil {
			continue
		}
		out = append(out, flattenJSON(v)...)
		i += int(dec.InputOffset()) - 1
	}
	// A URL path is decoded too, as a reader of the audit trail would.
	if p, err := url.PathUnescape(s); err == nil && p != s {
		out = append(out, p)
	}
	return out
}

func flattenJSON(v any) []string {
	switch v := v.(type) {
	case string:
		return append([]string{v}, decodedStrings(v)...)
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, flattenJSON(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for k, e := range v {
			out = append(append(out, k), flattenJSON(e)...)
		}
		return out
	}
	return nil
}

// TestGuestValuesAreStorable: on both stores, a run whose guest writes a value no store keeps
// ends, with not_storable where the value was JSON and with the text made storable where it
// was an error or a log line. Before, the host passed such values on, the store refused the
// commit, and the run was tried again forever.
func TestGuestValuesAreStorable(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", abi.MaxJSONDepth+1) + strings.Repeat("]", abi.MaxJSONDepth+1)
	unstorable := map[string]string{
		"NUL":                 `{"k": "a\u0000b"}`,
		"lone high surrogate": `{"k": "\ud800"}`,
		"lone low surrogate":  `["x\udc00"]`,
		"invalid UTF-8":       "{\"k\": \"\xff\xfe\"}",
		"number out of range": `{"n": 1e1001}`,
		"too deep":            deep,
	}
	type want struct{ status, code, step string }
	type cell struct {
		desc  string
		input map[string]any
		want  want
	}
	var cells []cell
	for name, v := range unstorable {
		cells = append(cells,
			cell{"step output " + name, map[string]any{"raw": []byte(v), "where": "step-output"}, want{"completed", "", abi.CodeNotStorable}},
			cell{"run output " + name, map[string]any{"raw": []byte(v), "where": "run-output"}, want{"failed", abi.CodeNotStorable, ""}})
		if v[0] == '{' {
			cells = append(cells, cell{"wait match " + name, map[string]any{"raw": []byte(v), "where": "wait-match"}, want{"failed", abi.CodeNotStorable, ""}})
		}
	}
	badError := []byte("{\"code\": \"c\\u0000ode\", \"message\": \"bad \xff bytes \\u0000 \\udc00\", \"details\": {\"k\": \"\\u0000\"}, \"nonRetryable\": true}")
	cells = append(cells,
		cell{"step error", map[string]any{"raw": badError, "where": "step-error"}, want{"completed", "", "c\uFFFDode"}},
		cell{"run error", map[string]any{"raw": badError, "where": "run-error"}, want{"failed", "c\uFFFDode", ""}})
	for _, where := range []string{"log", "stdout", "stderr"} {
		cells = append(cells, cell{where, map[string]any{"raw": []byte("NUL \x00 and \xff"), "where": where}, want{"completed", "", ""}})
	}
	for _, backend := range []string{"postgres", "embedded"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			e := newLeakEnv(t, backend, "127.0.0.1:1") // this test makes no request
			ids := map[string]cell{}
			for _, c := range cells {
				body, _ := json.Marshal(map[string]any{"input": c.input})
				r := call(t, e.srv, "POST", "/v1/workflows/probe/runs", e.token, body)
				if r.status != 201 {
					t.Fatalf("%s: start: %d %s", c.desc, r.status, r.body)
				}
				ids[r.json(t)["id"].(string)] = c
			}
			for id, c := range ids {
				var run wire.Run
				r := awaitEnd(t, e, id)
				if err := json.Unmarshal(r.body, &run); err != nil {
					t.Fatal(err)
				}
				if string(run.Status) != c.want.status || c.want.code != "" && (run.Error == nil || run.Error.Code != c.want.code) {
					t.Errorf("%s: %s, want %s %s", c.desc, r.body, c.want.status, c.want.code)
				}
				if c.want.step != "" {
					steps := call(t, e.srv, "GET", "/v1/workflows/probe/runs/"+id+"/steps", e.token, nil)
					if !strings.Contains(string(steps.body), `"code":"`+c.want.step+`"`) {
						t.Errorf("%s: the step did not fail with %s: %s", c.desc, c.want.step, steps.body)
					}
				}
			}
			if logs := e.logs.String(); !strings.Contains(logs, "NUL \uFFFD and \uFFFD") {
				t.Errorf("the guest's log line is not in the logs, made storable:\n%.3000s", logs)
			}
		})
	}
}
