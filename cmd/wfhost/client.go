package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wfhost/wfhost/api/client"
	"github.com/wfhost/wfhost/api/wire"
)

// This file is the plumbing every client command shares: connection and token flags, argument
// checks, flag parsing that fails before any request, and output (tables or the server's JSON).
// Output goes to c.App.Writer, so tests and embedders can capture it.

func urlFlag() cli.Flag {
	return &cli.StringFlag{Name: "url", Value: "http://127.0.0.1:8080", EnvVars: []string{"WFHOST_URL"}, Usage: "the daemon's API address"}
}

func tenantTokenFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "token", EnvVars: []string{"WFHOST_TOKEN"}, Usage: "a tenant's bearer token (default: the one a local daemon keeps in --data-dir/token)"},
		&cli.StringFlag{Name: "data-dir", Value: defaultDataDir(), EnvVars: []string{"WFHOST_DATA_DIR"}, Usage: "a local daemon's data directory, where the default token is read from"},
	}
}

func adminTokenFlag() cli.Flag {
	return &cli.StringFlag{Name: "admin-token", EnvVars: []string{"WFHOST_ADMIN_TOKEN"}, Usage: "the daemon's admin token (wfhost run --admin-token)"}
}

// clientFlags are the flags of a command that calls tenant routes.
func clientFlags(extra ...cli.Flag) []cli.Flag {
	flags := append([]cli.Flag{urlFlag()}, tenantTokenFlags()...)
	return append(append(flags, outputFlags()...), extra...)
}

// adminFlags are the flags of a command that calls admin routes only.
func adminFlags(extra ...cli.Flag) []cli.Flag {
	return append(append([]cli.Flag{urlFlag(), adminTokenFlag()}, outputFlags()...), extra...)
}

// tenantClient calls tenant routes with --token, or else the token a local daemon wrote to its
// data directory. Without either it fails here: every tenant route answers 401 without one,
// and saying where a token comes from helps more than the server's "header is required".
func tenantClient(c *cli.Context) (*client.Client, error) {
	token := c.String("token")
	if token == "" {
		if b, err := os.ReadFile(tokenFile(c.String("data-dir"))); err == nil {
			token = strings.TrimSpace(string(b))
		}
	}
	if token == "" {
		return nil, &authError{fmt.Sprintf("no tenant token: pass --token or set WFHOST_TOKEN (a local daemon keeps one in %s)", tokenFile(c.String("data-dir")))}
	}
	base, err := apiURL(c)
	if err != nil {
		return nil, err
	}
	return &client.Client{BaseURL: base, Token: token}, nil
}

// adminClient calls admin routes with --admin-token.
func adminClient(c *cli.Context) (*client.Client, error) {
	token := c.String("admin-token")
	if token == "" {
		return nil, &authError{fmt.Sprintf("%s needs the admin token: pass --admin-token or set WFHOST_ADMIN_TOKEN", c.Command.FullName())}
	}
	base, err := apiURL(c)
	if err != nil {
		return nil, err
	}
	return &client.Client{BaseURL: base, Token: token}, nil
}

// apiURL is --url, checked: a request to anything else fails in net/http with a message about
// protocol schemes, and would be taken for the daemon being down.
func apiURL(c *cli.Context) (string, error) {
	s := c.String("url")
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", usagef("--url must be the daemon's address, such as http://127.0.0.1:8080: %q", s)
	}
	return s, nil
}

// args returns exactly len(names) positional arguments or a usage error naming them.
func args(c *cli.Context, names ...string) ([]string, error) {
	if c.NArg() != len(names) {
		return nil, usagef("%s needs %d argument(s): %s", c.Command.FullName(), len(names), strings.Join(names, " "))
	}
	return c.Args().Slice(), nil
}

// optionalArg returns the one optional positional argument, "" when there is none.
func optionalArg(c *cli.Context, name string) (string, error) {
	if c.NArg() > 1 {
		return "", usagef("%s takes at most one argument: [%s]", c.Command.FullName(), name)
	}
	return c.Args().First(), nil
}

// jsonFlag parses a flag that holds JSON, so a typo fails here and not as a server error. As
// in curl and the GitHub CLI, "@FILE" reads the JSON from a file and "-" from stdin: a value
// of megabytes does not fit in a shell's argument list.
func jsonFlag(c *cli.Context, name string) (json.RawMessage, error) {
	s := c.String(name)
	if s == "" {
		return nil, nil
	}
	b, from, err := flagContent(c, s)
	if err != nil {
		return nil, usagef("--%s %s: %v", name, s, err)
	}
	if from == "" {
		if !json.Valid(b) {
			return nil, usagef("--%s is not valid JSON: %s", name, s)
		}
		return json.RawMessage(b), nil
	}
	b = bytes.TrimSpace(b)
	if err := json.Unmarshal(b, new(json.RawMessage)); err != nil {
		// The content is not quoted back: it may be megabytes.
		return nil, usagef("--%s %s: %s is not valid JSON: %v", name, s, from, err)
	}
	return json.RawMessage(b), nil
}

// flagContent is a flag's value: the file's bytes for "@FILE", stdin's for "-", else the
// value itself (from ""). No JSON text starts with "@" or is "-", so neither is ambiguous.
func flagContent(c *cli.Context, s string) (b []byte, from string, err error) {
	switch {
	case s == "-":
		in := c.App.Reader
		if in == nil {
			in = os.Stdin
		}
		b, err = io.ReadAll(in)
		return b, "stdin", err
	case strings.HasPrefix(s, "@"):
		b, err = os.ReadFile(s[1:])
		return b, "the file", err
	}
	return []byte(s), "", nil
}

// jsonObjectFlag is jsonFlag for flags whose value must be an object, such as --limits.
func jsonObjectFlag(c *cli.Context, name string) (json.RawMessage, error) {
	raw, err := jsonFlag(c, name)
	if err != nil || raw == nil {
		return raw, err
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil, usagef("--%s must be a JSON object such as {\"concurrency\": 5}: %s", name, truncate(string(raw), 200))
	}
	return raw, nil
}

// timeFlag parses --since/--until: an RFC 3339 time, a date (midnight UTC), or a duration
// meaning that long ago ("90m", "24h"), which is what one usually means at a terminal.
func timeFlag(c *cli.Context, name string, now time.Time) (time.Time, error) {
	s := strings.TrimSpace(c.String(name))
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usagef("--%s must be an RFC 3339 time (2026-01-02T15:04:05Z), a date (2026-01-02) or a duration ago (90m): %q", name, s)
}

// repeatable is a flag that may be given many times, each value kept whole. It is a
// cli.Generic rather than a StringSlice because urfave/cli splits slice values at commas, and a
// filter value may hold one (--input tags=a,b); turning the splitting off app-wide would change
// the daemon's flags. Set accepts anything: the command checks the values itself, since a
// failing Set makes urfave/cli print the whole help page above the error.
type repeatable struct{ values []string }

func (r *repeatable) Set(s string) error {
	r.values = append(r.values, s)
	return nil
}

func (r *repeatable) String() string {
	if r == nil {
		return ""
	}
	return strings.Join(r.values, " ")
}

// keyValuesFlag parses a repeatable flag of key=value pairs, in the order given.
func keyValuesFlag(c *cli.Context, name string) ([][2]string, error) {
	r, _ := c.Generic(name).(*repeatable)
	if r == nil {
		return nil, nil
	}
	var pairs [][2]string
	for _, s := range r.values {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return nil, usagef("--%s %q is not key=value", name, s)
		}
		if k == "" {
			return nil, usagef("--%s %q has no key before '='", name, s)
		}
		pairs = append(pairs, [2]string{k, v})
	}
	return pairs, nil
}

// out is where a command prints its result.
func out(c *cli.Context) io.Writer {
	if c.App.Writer != nil {
		return c.App.Writer
	}
	return os.Stdout
}

func newTable(c *cli.Context) *tabwriter.Writer {
	return tabwriter.NewWriter(out(c), 0, 4, 2, ' ', 0)
}

// render prints raw as is under --output json (as YAML under yaml), or else decodes it into a T
// and prints that for people.
func render[T any](c *cli.Context, raw json.RawMessage, human func(w *tabwriter.Writer, v T)) error {
	if structured(c) {
		return printDocument(c, raw)
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("decoding the server's response: %w", err)
	}
	w := newTable(c)
	human(w, v)
	return w.Flush()
}

// runDuration is how long the run took from creation to its end, "-" while it has not ended.
func runDuration(r wire.Run) string {
	if r.CompletedAt == nil {
		return "-"
	}
	return r.CompletedAt.Sub(r.CreatedAt).Round(time.Millisecond).String()
}

func printRun(w io.Writer, r wire.Run) {
	fmt.Fprintf(w, "run\t%s\nworkflow\t%s@%s\nstatus\t%s\n", r.ID, r.Workflow, r.Version, r.Status)
	if len(r.Input) > 0 {
		fmt.Fprintf(w, "input\t%s\n", compactJSON(r.Input))
	}
	if len(r.Output) > 0 {
		fmt.Fprintf(w, "output\t%s\n", compactJSON(r.Output))
	}
	if r.Error != nil {
		fmt.Fprintf(w, "error\t%s\n", r.Error)
		printStack(w, r.Error.Details)
	}
	if r.IdempotencyKey != "" {
		fmt.Fprintf(w, "idempotency key\t%s\n", r.IdempotencyKey)
	}
	if r.TriggeredBy != nil {
		fmt.Fprintf(w, "triggered by\t%s\n", triggerText(*r.TriggeredBy))
	}
	if r.ContinuedFrom != "" {
		fmt.Fprintf(w, "continues\t%s\n", r.ContinuedFrom)
	}
	if r.RestartedFrom != "" {
		fmt.Fprintf(w, "restarts\t%s\n", r.RestartedFrom)
	}
	if r.ParentRunID != "" {
		parent := r.ParentRunID
		if r.ParentWorkflow != "" {
			parent = r.ParentWorkflow + " " + parent
		}
		fmt.Fprintf(w, "parent\t%s at step %s (on its cancel: %s)\n", parent, r.ParentKey, r.ParentClose)
	}
	if r.ContinuedAs != "" {
		fmt.Fprintf(w, "continued as\t%s\n", r.ContinuedAs)
	}
	if r.Retry != nil {
		fmt.Fprintf(w, "attempt\t%d of %d\n", r.Attempt, r.Retry.Attempts)
	}
	if r.CancelRequestedAt != nil {
		fmt.Fprintf(w, "cancel requested\t%s\n", timeText(*r.CancelRequestedAt))
	}
	if r.PausedAt != nil {
		fmt.Fprintf(w, "pause asked\t%s\n", timeText(*r.PausedAt))
	}
	if r.Flow != nil {
		printFlow(w, r.Flow)
	}
	fmt.Fprintf(w, "retention\t%d days\nmodule\t%s\nactivations\t%d\ncreated\t%s\n", r.RetentionDays, r.ModuleDigest, r.Activations, timeText(r.CreatedAt))
	if r.StartedAt != nil {
		fmt.Fprintf(w, "started\t%s\n", timeText(*r.StartedAt))
	}
	if r.CompletedAt != nil {
		fmt.Fprintf(w, "completed\t%s\nduration\t%s\n", timeText(*r.CompletedAt), runDuration(r))
	}
}

// triggerText is what started a run, in one line.
func triggerText(t wire.RunTrigger) string {
	switch t.Kind {
	case "api":
		s := "api start"
		if t.TokenID != "" {
			s += " with token " + t.TokenID
		}
		if t.Host != "" {
			s += " (run at once by host " + t.Host + ")"
		}
		return s
	case "schedule":
		at := "-"
		if t.FireAt != nil {
			at = timeText(*t.FireAt)
		}
		return "schedule " + t.ScheduleID + " at its fire time " + at
	case "event", "signalWithStart":
		s := t.Kind + " " + t.Event
		if t.EventID != "" {
			s += " (id " + t.EventID + ")"
		}
		return s
	case "parent", "branch":
		return t.Kind + " run " + t.RunID + " at step " + t.Key
	case "hook":
		return "hook " + t.HookID + " of run " + t.RunID
	}
	return t.Kind + " of run " + t.RunID
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.RFC3339)
}

func optionalTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return timeText(*t)
}

// compactJSON prints a JSON value on one line, whatever its indentation on the wire.
func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// sortedKeys returns a map's keys in order, so tables do not shuffle between calls.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// printStack prints the stack a guest SDK kept in an error's details.stack (a Go panic's:
// abi/ABI.md §5) as a "stack" row whose lines stay under one another in the value column:
// the message above says the code and the panic once, and this is the one place the stack
// shows. Tabs become spaces, which the table would take for columns, and other control
// characters U+FFFD, so a guest cannot move the terminal's cursor or colour it.
func printStack(w io.Writer, details json.RawMessage) {
	var d struct {
		Stack string `json:"stack"`
	}
	if len(details) == 0 || json.Unmarshal(details, &d) != nil || strings.TrimSpace(d.Stack) == "" {
		return
	}
	key := "stack"
	for _, line := range strings.Split(strings.TrimRight(d.Stack, "\n"), "\n") {
		line = strings.Map(func(r rune) rune {
			switch {
			case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
				return '\ufffd'
			}
			return r
		}, strings.ReplaceAll(line, "\t", "    "))
		fmt.Fprintf(w, "%s\t%s\n", key, line)
		key = ""
	}
}

// printFlow says where a run that has not begun stands under its workflow's flow control:
// why it waits, on which key, against which limit.
func printFlow(w io.Writer, f *wire.RunFlow) {
	switch f.Waiting {
	case "concurrency":
		c := f.Concurrency
		fmt.Fprintf(w, "waiting\tfor a concurrency slot: key %q has %d of %d running; it starts when one ends\n", c.Key, c.Active, c.Limit)
	case "rate":
		rt := f.Rate
		fmt.Fprintf(w, "waiting\tthrottled: key %q may start %d per %s; it starts at %s\n", rt.Key, rt.Limit, time.Duration(rt.PeriodMs)*time.Millisecond, timeText(rt.NotBefore))
	case "debounce":
		d := f.Debounce
		fmt.Fprintf(w, "waiting\tdebounced: a start of key %q within %s replaces its input and delays it\n", d.Key, time.Duration(d.PeriodMs)*time.Millisecond)
	case "priority":
		fmt.Fprintf(w, "waiting\tdelayed by its priority (%d s)\n", f.Priority)
	}
	if c := f.Concurrency; c != nil && f.Waiting != "concurrency" {
		fmt.Fprintf(w, "concurrency\tkey %q, %d of %d running\n", c.Key, c.Active, c.Limit)
	}
	if f.Priority != 0 {
		fmt.Fprintf(w, "priority\t%d s\n", f.Priority)
	}
}
