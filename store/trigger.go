package store

import (
	"encoding/json"
	"time"
)

// TriggerKind names what started a run (Trigger.Kind).
type TriggerKind string

// What starts a run. A run's trigger is read from what its store already keeps (its parent
// link, the hook delivery that started it, its continuation and restart columns, the host it
// was created leased to) and, for the starts nothing else records, from NewRun.Trigger.
const (
	TriggerAPI             TriggerKind = "api"             // a client's start (the API, the CLI, the console)
	TriggerSchedule        TriggerKind = "schedule"        // a schedule's fire time
	TriggerEvent           TriggerKind = "event"           // an event its workflow declares as a trigger
	TriggerSignalWithStart TriggerKind = "signalWithStart" // a signal-with-start that found no open run
	TriggerParent          TriggerKind = "parent"          // a parent's child step
	TriggerBranch          TriggerKind = "branch"          // a parent's parallel step
	TriggerHook            TriggerKind = "hook"            // a completion hook of a run that ended
	TriggerRetry           TriggerKind = "retry"           // the run's own retry policy, after its predecessor failed
	TriggerContinueAsNew   TriggerKind = "continueAsNew"   // its predecessor continued as new
	TriggerRestart         TriggerKind = "restart"         // a restart or a fork of a source run
)

// Trigger is what started a run (Store.RunTrigger). The fields its Kind does not use are
// zero.
type Trigger struct {
	Kind TriggerKind `json:"kind"`
	// Host is the host that created a client's start leased to itself ("" when it was
	// created pending).
	Host string `json:"host,omitempty"`
	// TokenID is the API token a client's start came with ("" for a start in process).
	TokenID string `json:"tokenId,omitempty"`
	// ScheduleID and FireAt are a schedule's and the fire time it started the run for.
	ScheduleID string     `json:"scheduleId,omitempty"`
	FireAt     *time.Time `json:"fireAt,omitempty"`
	// Event is the trigger's or signal-with-start's event, EventID its id when it had one.
	Event   string `json:"event,omitempty"`
	EventID string `json:"eventId,omitempty"`
	// RunID is the run it came from: the parent (parent, branch), the run that ended (hook),
	// the predecessor (retry, continueAsNew), the source (restart).
	RunID string `json:"runId,omitempty"`
	// Key is the parent's step that started it (parent, branch).
	Key string `json:"key,omitempty"`
	// HookID is the hook (hook).
	HookID string `json:"hookId,omitempty"`
}

// TriggerArg is t as the stores keep it in runs.trigger: JSON, or nil for none.
func TriggerArg(t *Trigger) any {
	if t == nil {
		return nil
	}
	b, _ := json.Marshal(t)
	return string(b)
}

// TriggerOf composes a run's trigger from what its store keeps: stored, the trigger written at
// its start (NewRun.Trigger; nil for none); its parent link (parent, key; branch when it is
// a parallel step's branch); the hook delivery that started it (endedRun, hookID); its
// predecessor (continuedFrom, attempt) and restart source; and the host it was created
// leased to. The most specific wins: a run that continues a child is its predecessor's
// successor, not its parent's child.
func TriggerOf(stored []byte, continuedFrom string, attempt int, restartedFrom, createdBy, parent, key string, branch bool,
	endedRun, hookID string) Trigger {
	switch {
	case continuedFrom != "" && attempt > 1:
		return Trigger{Kind: TriggerRetry, RunID: continuedFrom}
	case continuedFrom != "":
		return Trigger{Kind: TriggerContinueAsNew, RunID: continuedFrom}
	case restartedFrom != "":
		return Trigger{Kind: TriggerRestart, RunID: restartedFrom}
	case branch:
		return Trigger{Kind: TriggerBranch, RunID: parent, Key: key}
	case parent != "":
		return Trigger{Kind: TriggerParent, RunID: parent, Key: key}
	case endedRun != "":
		return Trigger{Kind: TriggerHook, RunID: endedRun, HookID: hookID}
	}
	var t Trigger
	if len(stored) > 0 && json.Unmarshal(stored, &t) == nil && t.Kind != "" {
		if t.Kind == TriggerAPI {
			t.Host = createdBy // the token is kept; the host only where it is anyway
		}
		return t
	}
	return Trigger{Kind: TriggerAPI, Host: createdBy}
}
