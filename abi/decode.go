package abi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// How the host reads what a guest hands it: one function per payload, each the whole of the
// contract's rule for it (ABI.md §4.4, §4.5, §4.7, §4.10, §7). The host calls them before its
// Handler sees anything, so the engine behind the Handler trusts what it is given and checks
// none of it again. An error names the fault; the host adds the function and the step.

// MaxRetentionDays bounds a declared workflow's retentionDays: both stores keep it in a 32-bit
// integer column, and Postgres refuses anything larger at deploy.
const MaxRetentionDays = math.MaxInt32

// DecodeStepOptions reads step_run's opts: empty means all defaults; otherwise a StepOptions
// JSON whose retry policy, if any, is valid (RetryPolicy.Validate) and whose timeoutMs is not
// negative; a timeout past MaxDelay is returned as MaxDelay.
func DecodeStepOptions(raw []byte) (StepOptions, error) {
	var o StepOptions
	if len(raw) == 0 {
		return o, nil
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return StepOptions{}, fmt.Errorf("options are not a StepOptions JSON: %v", err)
	}
	if o.Retry != nil {
		if err := o.Retry.Validate(); err != nil {
			return StepOptions{}, err
		}
	}
	if o.TimeoutMs < 0 {
		return StepOptions{}, fmt.Errorf("timeoutMs is %d; want 0 (no timeout) or more", o.TimeoutMs)
	}
	o.TimeoutMs = min(o.TimeoutMs, MaxDelay.Milliseconds())
	return o, nil
}

// DecodeWaitOptions reads wait_event's opts: a WaitOptions JSON naming its event (CheckName),
// whose match is absent, null (returned as absent) or a JSON object, and whose timeoutMs is not
// negative; a timeout past MaxDelay is returned as MaxDelay. A match that is an object but
// breaks CheckJSON is the one fault that is not a broken call but a value no store keeps: its
// error wraps ErrNotStorable.
func DecodeWaitOptions(raw []byte) (WaitOptions, error) {
	var o WaitOptions
	if err := json.Unmarshal(raw, &o); err != nil {
		return WaitOptions{}, fmt.Errorf("options are not a WaitOptions JSON: %v", err)
	}
	if err := CheckName("event", o.Event); err != nil {
		return WaitOptions{}, err
	}
	switch m := bytes.TrimSpace(o.Match); {
	case len(m) == 0 || string(m) == "null":
		o.Match = nil
	case m[0] != '{':
		return WaitOptions{}, errors.New("match must be a JSON object")
	default:
		if err := CheckJSON(m); err != nil {
			return WaitOptions{}, fmt.Errorf("match cannot be stored: %w", err)
		}
		o.Match = m
	}
	if o.TimeoutMs < 0 {
		return WaitOptions{}, errors.New("timeoutMs must not be negative")
	}
	o.TimeoutMs = min(o.TimeoutMs, MaxDelay.Milliseconds())
	return o, nil
}

// DecodeErrorInfo reads the error a guest wrote (step_done's with OutcomeError, fail's) as
// ABI.md §4.5 and §4.10 say: ParseErrorInfo, made storable (ErrorInfo.Storable). What it
// returns, encoded, decodes to itself.
func DecodeErrorInfo(raw []byte) ErrorInfo {
	return ParseErrorInfo(raw).Storable()
}

// ParseErrorInfo is DecodeErrorInfo before the result is made storable, for a caller that must
// see the guest's text as it was written first (the host redacts secrets from it, then makes it
// storable). raw is an ErrorInfo JSON; anything that is not one, or one with neither code nor
// message, becomes the message whole, so the guest's words are never lost; a missing code
// becomes CodeWorkflowError.
func ParseErrorInfo(raw []byte) ErrorInfo {
	var info ErrorInfo
	if err := json.Unmarshal(raw, &info); err != nil || info.Code == "" && info.Message == "" {
		info = ErrorInfo{Message: string(raw)}
	}
	if info.Code == "" {
		info.Code = CodeWorkflowError
	}
	return info
}

// DecodeDescription reads what ExportDescribe returned and checks it (Description.Validate).
func DecodeDescription(raw []byte) (Description, error) {
	var d Description
	if err := json.Unmarshal(raw, &d); err != nil {
		return Description{}, fmt.Errorf("describe returned invalid JSON: %v", err)
	}
	if err := d.Validate(); err != nil {
		return Description{}, err
	}
	return d, nil
}

// Validate applies ABI.md §7 to a module's description: at least one workflow; each named by
// CheckName, with a version of 1 to MaxNameLen bytes that a store keeps (CheckText), declared
// once per (name, version); retentionDays from 0 to MaxRetentionDays; a valid retry policy;
// triggers that are names; a valid flow (Flow.Validate); and at most MaxHooks onEnd hooks,
// each valid (Hook.Validate).
func (d Description) Validate() error {
	if len(d.Workflows) == 0 {
		return errors.New("module declares no workflow")
	}
	type nameVersion struct{ name, version string }
	seen := make(map[nameVersion]bool, len(d.Workflows))
	for _, w := range d.Workflows {
		if err := CheckName("workflow", w.Name); err != nil {
			return err
		}
		if w.Version == "" {
			return fmt.Errorf("workflow %q: version is empty", w.Name)
		}
		if err := CheckText("version", w.Version, MaxNameLen); err != nil {
			return fmt.Errorf("workflow %q: %v", w.Name, err)
		}
		k := nameVersion{w.Name, w.Version}
		if seen[k] {
			return fmt.Errorf("workflow %q version %q is declared twice", w.Name, w.Version)
		}
		seen[k] = true
		if w.RetentionDays < 0 || w.RetentionDays > MaxRetentionDays {
			return fmt.Errorf("workflow %q: retentionDays %d out of range 0..%d", w.Name, w.RetentionDays, MaxRetentionDays)
		}
		if w.Retry != nil {
			if err := w.Retry.Validate(); err != nil {
				return fmt.Errorf("workflow %q: %v", w.Name, err)
			}
		}
		for _, t := range w.Triggers {
			if err := CheckName("trigger event", t); err != nil {
				return fmt.Errorf("workflow %q: %v", w.Name, err)
			}
		}
		if w.Flow != nil {
			if err := w.Flow.Validate(); err != nil {
				return fmt.Errorf("workflow %q: %v", w.Name, err)
			}
		}
		if len(w.OnEnd) > MaxHooks {
			return fmt.Errorf("workflow %q: onEnd has %d hooks, the limit is %d", w.Name, len(w.OnEnd), MaxHooks)
		}
		for i, h := range w.OnEnd {
			if err := h.Validate(); err != nil {
				return fmt.Errorf("workflow %q: onEnd[%d]: %v", w.Name, i, err)
			}
		}
	}
	if len(d.Features) > maxFeatures {
		return fmt.Errorf("module declares %d features, the limit is %d", len(d.Features), maxFeatures)
	}
	for _, f := range d.Features {
		if err := CheckName("feature", f); err != nil {
			return err
		}
	}
	return nil
}

// maxFeatures bounds a description's features: a list of names the host knows, not data.
const maxFeatures = 32

// DecodeEventSend reads event_send's req: an EventSend JSON naming exactly one of a run and
// the whole tenant, an event name (CheckName) and a payload that is any JSON value CheckJSON
// accepts (absent: {}). A payload that breaks CheckJSON wraps ErrNotStorable.
func DecodeEventSend(raw []byte) (EventSend, error) {
	var r EventSend
	if err := json.Unmarshal(raw, &r); err != nil {
		return EventSend{}, fmt.Errorf("the request is not an EventSend JSON: %v", err)
	}
	if (r.RunID == "") == !r.Broadcast {
		return EventSend{}, fmt.Errorf("the request names %s: want exactly one of runId and broadcast", map[bool]string{true: "both a run and the tenant", false: "neither a run nor the tenant"}[r.Broadcast])
	}
	if err := CheckName("event", r.Event); err != nil {
		return EventSend{}, err
	}
	if p := bytes.TrimSpace(r.Payload); len(p) == 0 {
		r.Payload = json.RawMessage("{}")
	} else if err := CheckJSON(p); err != nil {
		return EventSend{}, fmt.Errorf("payload: %w", err)
	}
	return r, nil
}

// DecodeChildRun reads child_run's req: a ChildRun JSON with a workflow name (CheckName), a
// version of at most MaxNameLen bytes of UTF-8 without NUL, an input that is storable JSON
// (absent: null; one that is not wraps ErrNotStorable), an id that is a name or empty, a
// timeout from 0 (none) on, taken as MaxDelay past it, and a parentClose policy ("" takes the
// default: cancel for an awaited child, abandon for a detached one).
func DecodeChildRun(raw []byte) (ChildRun, error) {
	var r ChildRun
	// encoding/json would read invalid UTF-8 in a name as U+FFFD: a workflow or an id the
	// guest did not write.
	if !utf8.Valid(raw) {
		return ChildRun{}, errors.New("the request is not valid UTF-8")
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return ChildRun{}, fmt.Errorf("the request is not a ChildRun JSON: %v", err)
	}
	if err := CheckName("workflow", r.Workflow); err != nil {
		return ChildRun{}, err
	}
	if len(r.Version) > MaxNameLen || !utf8.ValidString(r.Version) || strings.ContainsRune(r.Version, 0) {
		return ChildRun{}, fmt.Errorf("version: want at most %d bytes of UTF-8 without NUL", MaxNameLen)
	}
	if r.ID != "" {
		if err := CheckName("child id", r.ID); err != nil {
			return ChildRun{}, err
		}
	}
	if r.TimeoutMs < 0 {
		return ChildRun{}, fmt.Errorf("timeoutMs %d is negative", r.TimeoutMs)
	}
	r.TimeoutMs = min(r.TimeoutMs, MaxDelay.Milliseconds())
	switch r.ParentClose {
	case "":
		r.ParentClose = ParentCloseCancel
		if r.Detach {
			r.ParentClose = ParentCloseAbandon
		}
	case ParentCloseCancel, ParentCloseAbandon:
	default:
		return ChildRun{}, fmt.Errorf("parentClose %q: want %q or %q", r.ParentClose, ParentCloseCancel, ParentCloseAbandon)
	}
	if p := bytes.TrimSpace(r.Input); len(p) == 0 {
		r.Input = json.RawMessage("null")
	} else if err := CheckJSON(p); err != nil {
		return ChildRun{}, fmt.Errorf("input: %w", err)
	}
	return r, nil
}

// DecodeContinueAsNew reads continue_as_new's request: a ContinueAsNew JSON whose input, when
// present, is storable JSON (an input that is not wraps ErrNotStorable).
func DecodeContinueAsNew(raw []byte) (ContinueAsNew, error) {
	var r ContinueAsNew
	if err := json.Unmarshal(raw, &r); err != nil {
		return ContinueAsNew{}, fmt.Errorf("the request is not a ContinueAsNew JSON: %v", err)
	}
	if p := bytes.TrimSpace(r.Input); len(p) == 0 {
		r.Input = json.RawMessage("null")
	} else if err := CheckJSON(p); err != nil {
		return ContinueAsNew{}, fmt.Errorf("input: %w", err)
	}
	return r, nil
}

// DecodeParallel reads parallel_run's req: a Parallel JSON with 1 to MaxBranches branches, a
// join of JoinAll (absent: JoinAll), JoinFirst or JoinAllSettled, and a maxConcurrent from 0
// (the host's bound, DefaultMaxConcurrent) to branches. The returned MaxConcurrent is the
// bound in force: never 0, never more than Branches.
func DecodeParallel(raw []byte) (Parallel, error) {
	var r Parallel
	if !utf8.Valid(raw) {
		return Parallel{}, errors.New("the request is not valid UTF-8")
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return Parallel{}, fmt.Errorf("the request is not a Parallel JSON: %v", err)
	}
	if r.Branches < 1 || r.Branches > MaxBranches {
		return Parallel{}, fmt.Errorf("branches %d: want 1 to %d", r.Branches, MaxBranches)
	}
	switch r.Join {
	case "":
		r.Join = JoinAll
	case JoinAll, JoinFirst, JoinAllSettled:
	default:
		return Parallel{}, fmt.Errorf("join %q: want %q, %q or %q", r.Join, JoinAll, JoinFirst, JoinAllSettled)
	}
	if r.MaxConcurrent < 0 || r.MaxConcurrent > r.Branches {
		return Parallel{}, fmt.Errorf("maxConcurrent %d: want 0 (the host's bound) to branches (%d)", r.MaxConcurrent, r.Branches)
	}
	if r.MaxConcurrent == 0 {
		r.MaxConcurrent = min(DefaultMaxConcurrent, r.Branches)
	}
	return r, nil
}
