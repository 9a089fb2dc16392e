package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// What a client may send, checked here so that every caller (the API, the CLI through it,
// tests, embedders) meets the same bounds. Values a store would keep are checked with abi's
// one rule (CheckJSON, CheckText, CheckName); the bounds below are the engine's own, chosen so
// that every value within them fits both stores and still means a limit. A mistake is
// ErrInvalid with a message that names the field by its API name.

// Bounds on the strings a client names things with.
const (
	maxIdempotencyKeyBytes = 200
	// MaxEventIDBytes bounds a broadcast's event id and a signal's id.
	MaxEventIDBytes   = 200
	maxTokenNameBytes = 200
	// maxTokenIDBytes is far past any token id the engine makes ("tok_" and 16 hex digits).
	maxTokenIDBytes = 64
	// maxCursorBytes is far past any cursor the stores make (a time and a UUID in base64).
	maxCursorBytes = 512
	// MaxListLimit is the largest page a run listing returns.
	MaxListLimit = 500
	// MaxRetentionDaysRequested bounds a start request's retentionDays: Postgres keeps it in
	// an integer column. Anything over the operator's ceiling is clamped to it anyway.
	MaxRetentionDaysRequested = math.MaxInt32
)

// LimitRange is the range an admin may set one of a tenant's limits to; 0 always means "the
// operator's default".
type LimitRange struct {
	Name string // the limit's JSON name in store.Limits
	Max  int64
	get  func(store.Limits) int64
}

// LimitRanges returns the bounds of every numeric tenant limit, a copy of limitRanges.
func LimitRanges() []LimitRange { return slices.Clone(limitRanges) }

// limitRanges are the bounds of every numeric tenant limit (api/openapi.json documents the
// same numbers). Past them a limit stops being one: 64 MiB pages is wasm32's whole address
// space, an hour is longer than any activation should hold a slot, and a JSON value of 64 MiB
// is far past what a run should carry yet well inside both stores' own bounds (Postgres's
// jsonb keeps at most 255 MiB).
var limitRanges = []LimitRange{
	{"memoryPages", 65536, func(l store.Limits) int64 { return int64(l.MemoryPages) }},
	{"activationTimeoutMs", int64(time.Hour / time.Millisecond), func(l store.Limits) int64 { return l.ActivationTimeoutMs }},
	{"concurrency", 100_000, func(l store.Limits) int64 { return int64(l.Concurrency) }},
	{"maxModuleBytes", 1 << 30, func(l store.Limits) int64 { return int64(l.MaxModuleBytes) }},
	{"maxInputBytes", 64 << 20, func(l store.Limits) int64 { return int64(l.MaxInputBytes) }},
	{"maxOutputBytes", 64 << 20, func(l store.Limits) int64 { return int64(l.MaxOutputBytes) }},
	{"maxStepOutputBytes", 64 << 20, func(l store.Limits) int64 { return int64(l.MaxStepOutputBytes) }},
	{"maxEventBytes", 64 << 20, func(l store.Limits) int64 { return int64(l.MaxEventBytes) }},
	{"maxStepsPerRun", 1_000_000, func(l store.Limits) int64 { return int64(l.MaxStepsPerRun) }},
	{"maxBufferedEvents", 100_000, func(l store.Limits) int64 { return int64(l.MaxBufferedEvents) }},
}

// tenantIDPattern is what a tenant id is: it appears in paths, metrics labels and logs.
var tenantIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// invalid is a client mistake in field: ErrInvalid, with the reason.
func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s %s", ErrInvalid, field, fmt.Sprintf(format, args...))
}

// checkJSON applies abi.CheckJSON to a JSON value a client sent as field.
func checkJSON(field string, v json.RawMessage) error {
	if err := abi.CheckJSON(v); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrInvalid, field, err)
	}
	return nil
}

// checkText applies abi.CheckText to a string a client sent as field.
func checkText(field, s string, max int) error {
	if err := abi.CheckText(field, s, max); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// validName applies ABI.md §4.2 (abi.CheckName) to a name a client sent.
func validName(what, name string) error {
	if err := abi.CheckName(what, name); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// validTenantID checks a tenant id a client named.
func validTenantID(id string) error {
	if !tenantIDPattern.MatchString(id) {
		return invalid("tenant id", "%q must be 1 to 63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit", id)
	}
	return nil
}

// validLimits checks a tenant's limit overrides against limitRanges and the allowlist's form.
func validLimits(l store.Limits) error {
	for _, r := range limitRanges {
		if v := r.get(l); v < 0 || v > r.Max {
			return invalid("limits."+r.Name, "must be from 0 (the default) to %d, not %d", r.Max, v)
		}
	}
	if len(l.AllowedHosts) > host.MaxAllowedHosts {
		return invalid("limits.allowedHosts", "has %d entries; the limit is %d", len(l.AllowedHosts), host.MaxAllowedHosts)
	}
	for i, h := range l.AllowedHosts {
		field := fmt.Sprintf("limits.allowedHosts[%d]", i)
		if err := checkText(field, h, 0); err != nil {
			return err
		}
		if err := host.CheckAllowedHost(h); err != nil {
			return invalid(field, "%q: %v", h, err)
		}
	}
	return nil
}

// checkRunFilter checks a run listing's filter.
func checkRunFilter(f store.RunFilter) error {
	if f.Workflow != "" {
		if err := validName("workflow", f.Workflow); err != nil {
			return err
		}
	}
	switch f.Status {
	case "", store.StatusPending, store.StatusRunning, store.StatusCompleted, store.StatusFailed, store.StatusCancelled, store.StatusContinued, store.StatusNondeterministic, store.StatusPaused:
	default:
		return invalid("status", "%q is not a run status (pending, running, paused, completed, failed, cancelled, continued, nondeterministic)", f.Status)
	}
	if f.Limit < 0 || f.Limit > MaxListLimit {
		return invalid("limit", "must be from 1 to %d, not %d", MaxListLimit, f.Limit)
	}
	for field, t := range map[string]time.Time{"since": f.Since, "until": f.Until} {
		if !t.IsZero() && (t.Year() < 0 || t.Year() > 9999) {
			return invalid(field, "must be a time of the years 0000 to 9999, not %s", t)
		}
	}
	if err := checkText("cursor", f.Cursor, maxCursorBytes); err != nil {
		return err
	}
	if err := checkText("version", f.Version, abi.MaxNameLen); err != nil {
		return err
	}
	if err := checkText("idempotencyKey", f.IdempotencyKey, maxIdempotencyKeyBytes); err != nil {
		return err
	}
	if len(f.Input) > 0 {
		if err := checkJSON("input filter", f.Input); err != nil {
			return err
		}
	}
	return nil
}
