package abi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Flow is a workflow's flow control (ABI.md §7, the optional "flow" of a workflow): how many of
// its runs may execute at once per key, how many may start per period per key, which starts
// replace a pending one, and the default priority of its runs. A nil part is no control of
// that kind. Keys are JSON paths into the run's input (FlowPath); a part with no key has one
// key for the whole workflow.
type Flow struct {
	Concurrency *FlowConcurrency `json:"concurrency,omitempty"`
	Rate        *FlowRate        `json:"rate,omitempty"`
	Debounce    *FlowDebounce    `json:"debounce,omitempty"`
	// Priority is the default priority of a run, in seconds of head start (MinPriority to
	// MaxPriority): a run of priority p is claimed as if it had been started p seconds
	// earlier; a start's own priority overrides it.
	Priority int `json:"priority,omitempty"`
}

// FlowConcurrency bounds the runs of one key that are started and not ended.
type FlowConcurrency struct {
	Key   string `json:"key,omitempty"`
	Limit int    `json:"limit"`
}

// FlowRate bounds the runs of one key that start in any window of PeriodMs: a start past the
// limit is delayed (a throttle), never refused.
type FlowRate struct {
	Key      string `json:"key,omitempty"`
	Limit    int    `json:"limit"`
	PeriodMs int64  `json:"periodMs"`
}

// FlowDebounce makes a start wait PeriodMs, and a later start of the same key within that
// wait replace the pending run's input and push its start PeriodMs further.
type FlowDebounce struct {
	Key      string `json:"key,omitempty"`
	PeriodMs int64  `json:"periodMs"`
}

// Bounds of a Flow (ABI.md §7).
const (
	MaxFlowConcurrency = 10_000
	// MaxFlowRate bounds a rate's limit: a store keeps the start times of the last Limit
	// starts of each key.
	MaxFlowRate = 1_000
	// MaxFlowPeriod bounds a rate's and a debounce's period.
	MaxFlowPeriod = 7 * 24 * time.Hour
	// MinPriority and MaxPriority bound a priority, in seconds (Inngest's range).
	MinPriority = -600
	MaxPriority = 600
	// MaxFlowKeyLen bounds a key's value, in bytes: keys are stored, indexed and shown.
	MaxFlowKeyLen = 256
	// maxFlowPathLen and maxFlowPathSegments bound a key's path.
	maxFlowPathLen      = 200
	maxFlowPathSegments = 16
)

// Validate applies ABI.md §7 to a flow: limits and periods in range, key paths that parse.
func (f Flow) Validate() error {
	if c := f.Concurrency; c != nil {
		if c.Limit < 1 || c.Limit > MaxFlowConcurrency {
			return fmt.Errorf("flow.concurrency.limit %d out of range 1..%d", c.Limit, MaxFlowConcurrency)
		}
		if _, err := ParseFlowPath(c.Key); err != nil {
			return fmt.Errorf("flow.concurrency.key: %v", err)
		}
	}
	if r := f.Rate; r != nil {
		if r.Limit < 1 || r.Limit > MaxFlowRate {
			return fmt.Errorf("flow.rate.limit %d out of range 1..%d", r.Limit, MaxFlowRate)
		}
		if err := checkFlowPeriod("flow.rate.periodMs", r.PeriodMs); err != nil {
			return err
		}
		if _, err := ParseFlowPath(r.Key); err != nil {
			return fmt.Errorf("flow.rate.key: %v", err)
		}
	}
	if d := f.Debounce; d != nil {
		if err := checkFlowPeriod("flow.debounce.periodMs", d.PeriodMs); err != nil {
			return err
		}
		if _, err := ParseFlowPath(d.Key); err != nil {
			return fmt.Errorf("flow.debounce.key: %v", err)
		}
	}
	return CheckPriority("flow.priority", f.Priority)
}

// CheckPriority checks a priority (Flow.Priority, or a start's).
func CheckPriority(what string, p int) error {
	if p < MinPriority || p > MaxPriority {
		return fmt.Errorf("%s %d out of range %d..%d (seconds)", what, p, MinPriority, MaxPriority)
	}
	return nil
}

func checkFlowPeriod(what string, ms int64) error {
	if ms < 1 || ms > MaxFlowPeriod.Milliseconds() {
		return fmt.Errorf("%s %d out of range 1..%d", what, ms, MaxFlowPeriod.Milliseconds())
	}
	return nil
}

// FlowPath is a parsed key path: "$" followed by fields (".name", letters, digits, "_" and
// "-") and array indexes ("[0]"). It is the subset of JSONPath that names one value, so a
// key means the same to every reader of it.
type FlowPath struct {
	raw      string
	segments []pathSegment
}

type pathSegment struct {
	field string
	index int // when field is ""
}

// ParseFlowPath parses a key path; "" is the path of no key (every run shares one key).
func ParseFlowPath(s string) (FlowPath, error) {
	if s == "" {
		return FlowPath{}, nil
	}
	if len(s) > maxFlowPathLen {
		return FlowPath{}, fmt.Errorf("path is %d bytes, the limit is %d", len(s), maxFlowPathLen)
	}
	if s[0] != '$' {
		return FlowPath{}, fmt.Errorf("path %q does not start with $", s)
	}
	p := FlowPath{raw: s}
	rest := s[1:]
	for rest != "" {
		if len(p.segments) == maxFlowPathSegments {
			return FlowPath{}, fmt.Errorf("path %q has more than %d segments", s, maxFlowPathSegments)
		}
		switch rest[0] {
		case '.':
			n := 1
			for n < len(rest) && isFieldByte(rest[n]) {
				n++
			}
			if n == 1 {
				return FlowPath{}, fmt.Errorf("path %q: a field name after . must be letters, digits, _ or -", s)
			}
			p.segments = append(p.segments, pathSegment{field: rest[1:n]})
			rest = rest[n:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 2 {
				return FlowPath{}, fmt.Errorf("path %q: [ must hold an array index", s)
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || i < 0 || i > 1_000_000 || rest[1] == '+' {
				return FlowPath{}, fmt.Errorf("path %q: [%s] is not an array index", s, rest[1:end])
			}
			p.segments = append(p.segments, pathSegment{index: i})
			rest = rest[end+1:]
		default:
			return FlowPath{}, fmt.Errorf("path %q: unexpected %q (a path is $ then .field or [index] segments)", s, rest[0])
		}
	}
	if len(p.segments) == 0 {
		return FlowPath{}, fmt.Errorf("path %q names the whole input; name a field of it", s)
	}
	return p, nil
}

func isFieldByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// String is the path as written.
func (p FlowPath) String() string { return p.raw }

// ErrFlowKey marks a run's input that yields no key for its workflow's flow control: the
// start is refused (the caller's input is at fault, so the API answers 400).
var ErrFlowKey = errors.New("no flow control key")

// Key is the key the path names in input: a string as it is, a number or a boolean as its
// JSON text. The path of no key gives "". A missing value, null, an object or an array, or a
// key longer than MaxFlowKeyLen or not storable as text, wraps ErrFlowKey.
func (p FlowPath) Key(input json.RawMessage) (string, error) {
	if len(p.segments) == 0 {
		return "", nil
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("%w: input is not JSON: %v", ErrFlowKey, err)
	}
	for _, s := range p.segments {
		switch {
		case s.field != "":
			obj, ok := v.(map[string]any)
			if !ok {
				return "", fmt.Errorf("%w: input has no object where %s looks up %q", ErrFlowKey, p.raw, s.field)
			}
			if v, ok = obj[s.field]; !ok {
				return "", fmt.Errorf("%w: input has no value at %s", ErrFlowKey, p.raw)
			}
		default:
			arr, ok := v.([]any)
			if !ok || s.index >= len(arr) {
				return "", fmt.Errorf("%w: input has no value at %s", ErrFlowKey, p.raw)
			}
			v = arr[s.index]
		}
	}
	var key string
	switch v := v.(type) {
	case string:
		key = v
	case json.Number:
		key = v.String()
	case bool:
		key = strconv.FormatBool(v)
	default:
		return "", fmt.Errorf("%w: the value at %s is %s; a key is a string, a number or a boolean", ErrFlowKey, p.raw, jsonKind(v))
	}
	if err := CheckText("the key at "+p.raw, key, MaxFlowKeyLen); err != nil {
		return "", fmt.Errorf("%w: %v", ErrFlowKey, err)
	}
	return key, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return "not a key"
}

// FlowKeys are a run's keys under its workflow's Flow, one per part that the Flow has.
type FlowKeys struct {
	Concurrency, Rate, Debounce string
}

// Keys evaluates every part's key path on input (FlowPath.Key). Paths were checked by
// Validate; one that does not parse wraps ErrFlowKey too.
func (f Flow) Keys(input json.RawMessage) (FlowKeys, error) {
	var k FlowKeys
	eval := func(what, path string, out *string) error {
		p, err := ParseFlowPath(path)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrFlowKey, what, err)
		}
		if *out, err = p.Key(input); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	if f.Concurrency != nil {
		if err := eval("concurrency key", f.Concurrency.Key, &k.Concurrency); err != nil {
			return FlowKeys{}, err
		}
	}
	if f.Rate != nil {
		if err := eval("rate key", f.Rate.Key, &k.Rate); err != nil {
			return FlowKeys{}, err
		}
	}
	if f.Debounce != nil {
		if err := eval("debounce key", f.Debounce.Key, &k.Debounce); err != nil {
			return FlowKeys{}, err
		}
	}
	return k, nil
}
