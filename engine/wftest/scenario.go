package wftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// MaxScenarioBytes bounds a scenario file: a scenario is a page of JSON, and a file of
// megabytes is a mistake to refuse, not one to read.
const MaxScenarioBytes = 1 << 20

// maxEvents and maxSecrets bound a scenario's lists; a scenario names what a test needs.
const (
	maxEvents  = 1000
	maxSecrets = 100
	maxFakes   = 100
)

// Scenario is one scenario file: what to run and how it must end.
type Scenario struct {
	// Name is what the summary calls it; default: the file's name.
	Name     string `json:"name,omitempty"`
	Workflow string `json:"workflow"`
	// Version is the workflow version to start; "": the latest.
	Version string          `json:"version,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	// Events are signals sent to the run at virtual times after its start.
	Events []Event `json:"events,omitempty"`
	// Secrets are the tenant's secrets the run's steps read (fakes: the harness seals them
	// with a key of its own).
	Secrets map[string]string `json:"secrets,omitempty"`
	// HTTP are the answers to the run's outbound requests, by method and URL; a request no
	// fake answers fails as an unreachable host does. Their hosts are the tenant's allowlist.
	HTTP   []HTTPFake `json:"http,omitempty"`
	Expect Expect     `json:"expect"`
}

// HTTPFake answers outbound requests with Method to URL (exactly, query included).
type HTTPFake struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	// Body is the response body: a JSON string is sent as its text, any other JSON value
	// as its JSON.
	Body json.RawMessage `json:"body,omitempty"`
	// RequestHeaders must all be on the request for this fake to answer it (a bearer token
	// made from a fake secret, say).
	RequestHeaders map[string]string `json:"requestHeaders,omitempty"`
}

// Event is a signal sent to the run when the virtual clock reaches At after the run's start.
type Event struct {
	At      Duration        `json:"at"`
	Name    string          `json:"name"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Expect is how the run must end. Status is required; the rest is checked when given.
type Expect struct {
	Status store.RunStatus `json:"status"`
	// Output is compared as JSON values (key order and spacing do not matter).
	Output json.RawMessage `json:"output,omitempty"`
	// Error is the failed run's error code (abi.ErrorInfo.Code).
	Error string `json:"error,omitempty"`
	// Journal is the run's journal keys, in order.
	Journal []string `json:"journal,omitempty"`
}

// Duration is a time.Duration written as Go writes one ("90s", "2h30m"), with "d" for days
// of 24 hours ("30d").
type Duration time.Duration

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"90s\", \"2h\" or \"30d\": %w", err)
	}
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as time.Duration's String does.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func parseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseUint(days, 10, 16)
		if err != nil {
			return 0, fmt.Errorf("duration %q: days must be a whole number up to 65535", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: %w", s, err)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return d, nil
}

// Load reads and checks a scenario file: at most MaxScenarioBytes of UTF-8, one JSON object
// with no field it does not know.
func Load(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxScenarioBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sc, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// Parse checks a scenario document (Load).
func Parse(b []byte) (*Scenario, error) {
	if len(b) > MaxScenarioBytes {
		return nil, fmt.Errorf("a scenario is at most %d bytes", MaxScenarioBytes)
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("not UTF-8: a scenario is a JSON document")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var sc Scenario
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("not a scenario: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return &sc, sc.check()
}

func (sc *Scenario) check() error {
	text := func(what, s string, max int) error {
		if s == "" || len(s) > max || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return fmt.Errorf("%s must be 1 to %d bytes without control characters", what, max)
		}
		return nil
	}
	if err := text("workflow", sc.Workflow, abi.MaxNameLen); err != nil {
		return err
	}
	if sc.Name != "" {
		if err := text("name", sc.Name, abi.MaxNameLen); err != nil {
			return err
		}
	}
	if sc.Version != "" {
		if err := text("version", sc.Version, abi.MaxNameLen); err != nil {
			return err
		}
	}
	if len(sc.Events) > maxEvents {
		return fmt.Errorf("%d events: at most %d", len(sc.Events), maxEvents)
	}
	for i, ev := range sc.Events {
		if err := text(fmt.Sprintf("events[%d].name", i), ev.Name, abi.MaxNameLen); err != nil {
			return err
		}
		if i > 0 && ev.At < sc.Events[i-1].At {
			return fmt.Errorf("events[%d] at %v comes before events[%d] at %v: list events in time order", i, time.Duration(ev.At), i-1, time.Duration(sc.Events[i-1].At))
		}
		if time.Duration(ev.At) > abi.MaxDelay {
			return fmt.Errorf("events[%d].at %v is past the longest delay (%v)", i, time.Duration(ev.At), abi.MaxDelay)
		}
	}
	if len(sc.Secrets) > maxSecrets {
		return fmt.Errorf("%d secrets: at most %d", len(sc.Secrets), maxSecrets)
	}
	if len(sc.HTTP) > maxFakes {
		return fmt.Errorf("%d http fakes: at most %d", len(sc.HTTP), maxFakes)
	}
	seen := map[string]bool{}
	for i, h := range sc.HTTP {
		if err := h.check(); err != nil {
			return fmt.Errorf("http[%d]: %w", i, err)
		}
		k := h.Method + " " + h.URL
		if seen[k] {
			return fmt.Errorf("http[%d]: a second fake for %s", i, k)
		}
		seen[k] = true
	}
	switch sc.Expect.Status {
	case store.StatusCompleted, store.StatusFailed, store.StatusCancelled, store.StatusNondeterministic, store.StatusContinued:
	case "":
		return fmt.Errorf("expect.status is required: completed, failed, cancelled, continued or nondeterministic")
	default:
		return fmt.Errorf("expect.status %q: want completed, failed, cancelled, continued or nondeterministic", sc.Expect.Status)
	}
	if len(sc.Expect.Output) > 0 && sc.Expect.Status != store.StatusCompleted {
		return fmt.Errorf("expect.output is for a completed run, not a %s one", sc.Expect.Status)
	}
	return nil
}

func (h HTTPFake) check() error {
	switch h.Method {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
	default:
		return fmt.Errorf("method %q: want GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS", h.Method)
	}
	u, err := url.Parse(h.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(h.URL) > 2048 {
		return fmt.Errorf("url %.100q: want an absolute http or https URL of at most 2048 bytes", h.URL)
	}
	if h.Status < 100 || h.Status > 599 {
		return fmt.Errorf("status %d: want 100 to 599", h.Status)
	}
	for k, v := range h.RequestHeaders {
		if k == "" || strings.ContainsAny(k+v, "\r\n\x00") {
			return fmt.Errorf("requestHeaders %.60q: a header is a name and a value on one line", k)
		}
	}
	for k, v := range h.Headers {
		if k == "" || strings.ContainsAny(k+v, "\r\n\x00") {
			return fmt.Errorf("header %.60q: a header is a name and a value on one line", k)
		}
	}
	return nil
}

// body is the fake's response body.
func (h HTTPFake) body() []byte {
	var s string
	if json.Unmarshal(h.Body, &s) == nil {
		return []byte(s)
	}
	// Sent compact, as a server's encoder would, not as the scenario file spaces it.
	var b bytes.Buffer
	if json.Compact(&b, h.Body) != nil {
		return h.Body
	}
	return b.Bytes()
}
