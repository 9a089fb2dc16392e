package api

import (
	"encoding/json"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// The API answers with the shapes of package wire, built here from the engine's records: the
// records are the store's, and the wire format changes only on purpose.

func viewRun(r store.Run) wire.Run {
	return wire.Run{
		ID: r.ID, Workflow: r.Workflow, Version: r.Version, Status: wire.RunStatus(r.Status), Input: r.Input,
		Output: r.Output, Error: r.Error, IdempotencyKey: r.IdempotencyKey, RetentionDays: r.RetentionDays,
		ModuleDigest: r.Digest, Activations: r.Activations, CreatedAt: r.CreatedAt, StartedAt: r.StartedAt,
		CompletedAt: r.CompletedAt, UpdatedAt: r.UpdatedAt, Deadline: r.Deadline, Retry: r.Retry,
		Attempt: max(r.Attempt, 1), ContinuedFrom: r.ContinuedFrom, ContinuedAs: r.ContinuedAs,
		CancelRequestedAt: r.CancelRequestedAt, CancelGraceUntil: r.CancelGraceUntil, RestartedFrom: r.RestartedFrom,
		PausedAt: r.PausedAt,
	}
}

// viewTrigger is what started a run, as the API shows it.
func viewTrigger(t store.Trigger) *wire.RunTrigger {
	return &wire.RunTrigger{Kind: string(t.Kind), Host: t.Host, TokenID: t.TokenID, ScheduleID: t.ScheduleID, FireAt: t.FireAt,
		Event: t.Event, EventID: t.EventID, RunID: t.RunID, Key: t.Key, HookID: t.HookID}
}

// viewParent sets a child run's link to its parent (ParentWorkflow is the caller's).
func viewParent(v *wire.Run, link store.ChildLink) {
	v.ParentRunID, v.ParentKey, v.ParentClose = link.ParentRunID, link.ParentKey, link.ParentClose
}

// viewSignal is what became of an event sent to one run, with its id when it had one.
func viewSignal(event, signalID string, res store.SignalResult) wire.SignalResult {
	state := wire.SignalBuffered
	if res.Delivered {
		state = wire.SignalDelivered
	}
	return wire.SignalResult{Event: event, SignalID: signalID, State: state, Duplicate: res.Duplicate}
}

func viewRuns(runs []store.Run) []wire.Run {
	out := make([]wire.Run, 0, len(runs))
	for _, r := range runs {
		out = append(out, viewRun(r))
	}
	return out
}

func viewStep(s store.Step) wire.Step {
	v := wire.Step{
		Seq: s.Seq, Key: s.Key, Kind: string(s.Kind), Status: string(s.Status), Attempt: s.Attempt, Output: s.Output,
		Error: s.Error, WakeAt: s.WakeAt, Event: s.Event, Match: s.Match, StartedAt: s.StartedAt,
		CompletedAt: s.CompletedAt,
	}
	if s.CompletedAt != nil {
		ms := float64(s.CompletedAt.Sub(s.StartedAt).Microseconds()) / 1000
		v.DurationMs = &ms
	}
	return v
}

func viewOutbound(o store.OutboundRecord) wire.OutboundRecord {
	return wire.OutboundRecord{Step: o.Step, RequestID: o.RequestID, Hop: o.Hop, Method: o.Method, Scheme: o.Scheme,
		Host: o.Host, Port: o.Port, Path: o.Path, Status: o.Status, Error: o.Error, BytesOut: o.BytesOut,
		BytesIn: o.BytesIn, DurationMs: o.DurationMs, At: o.At}
}

func viewModule(m store.Module) wire.Module {
	return wire.Module{Digest: m.Digest, Size: m.Size, ABIVersion: m.ABIVersion, CreatedAt: m.CreatedAt}
}

func viewWorkflow(wf store.Workflow) wire.Workflow {
	return wire.Workflow{
		Name: wf.Name, Version: wf.Version, RetentionDays: wf.RetentionDays, Retry: wf.Retry,
		Triggers: wf.Triggers, ModuleDigest: wf.Digest,
	}
}

func viewWorkflowSummary(wf store.WorkflowSummary, pauses []store.WorkflowPause) wire.WorkflowSummary {
	counts := make(map[string]int, len(wf.RunCounts))
	for s, n := range wf.RunCounts {
		counts[string(s)] = n
	}
	out := wire.WorkflowSummary{Name: wf.Name, LatestVersion: wf.LatestVersion, Versions: wf.Versions, RunCounts: counts}
	for _, p := range pauses {
		switch {
		case p.Workflow != wf.Name:
		case p.Version == "":
			out.Paused = true
		default:
			out.PausedVersions = append(out.PausedVersions, p.Version)
		}
	}
	return out
}

// viewCheck is the upgrade gate's finding for one run in its wire form: the engine's JSON is
// the wire's (TestWireMatchesOpenAPI checks the shape).
func viewCheck(c engine.UpgradeRun) *wire.UpgradeRun {
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	var out wire.UpgradeRun
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return &out
}

// viewLimits and storeLimits convert between the two forms of a tenant's limits. The types have
// the same fields in the same order, so a limit added to one and not the other fails to build.
func viewLimits(l store.Limits) wire.Limits { return wire.Limits(l) }

func storeLimits(l wire.Limits) store.Limits { return store.Limits(l) }

func viewToken(t store.Token, secret string) wire.Token {
	return wire.Token{ID: t.ID, Tenant: t.TenantID, Name: t.Name, CreatedAt: t.CreatedAt, RevokedAt: t.RevokedAt, Secret: secret}
}

func viewSecret(s store.Secret) wire.Secret {
	return wire.Secret{Name: s.Name, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}
