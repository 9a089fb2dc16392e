package wftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
	Expect  Expect            `json:"expect"`
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
