package store

import (
	"encoding/json"
	"time"
)

// OverlapPolicy says what a schedule does at a fire time while the run it started last is
// still live (not Terminal: pending, running or nondeterministic).
type OverlapPolicy string

// Overlap policies.
const (
	// OverlapSkip starts nothing at that fire time.
	OverlapSkip OverlapPolicy = "skip"
	// OverlapBufferOne keeps the fire time, one at most, and starts it once the live run ends;
	// a later fire time while one is kept is dropped.
	OverlapBufferOne OverlapPolicy = "buffer_one"
	// OverlapAllowAll starts a run at every fire time, whatever is live.
	OverlapAllowAll OverlapPolicy = "allow_all"
	// OverlapCancelPrevious cancels the live run (the hard terminate of CancelRun: its
	// activation is stopped where it stands, nothing of the guest's runs after) and starts one.
	OverlapCancelPrevious OverlapPolicy = "cancel_previous"
)

// Valid reports whether p is one of the policies.
func (p OverlapPolicy) Valid() bool {
	switch p {
	case OverlapSkip, OverlapBufferOne, OverlapAllowAll, OverlapCancelPrevious:
		return true
	}
	return false
}

// Schedule starts runs of one workflow at the times a cron expression or a fixed interval
// names. The engine computes the times; the store keeps the schedule and where it stands, so
// it survives restarts, and is the one place hosts agree through (AdvanceSchedule).
type Schedule struct {
	TenantID string
	ID       string // the tenant's name for it, unique in the tenant
	// Cron (with seconds, in TimeZone) or IntervalMs (fire times are the multiples of it since
	// the Unix epoch): exactly one is set.
	Cron       string
	TimeZone   string // an IANA name; "" is UTC
	IntervalMs int64
	// Workflow, Version ("" is the latest at each fire time) and Input of every run it starts.
	Workflow string
	Version  string
	Input    json.RawMessage
	Overlap  OverlapPolicy
	// CatchupWindowMs bounds catch-up after downtime: a fire time older than this when the
	// schedule is looked at is skipped, not started late.
	CatchupWindowMs int64
	// JitterMs delays each start by up to this long after its fire time, by an amount the fire
	// time fixes (so every host computes the same DueAt).
	JitterMs int64
	Paused   bool
	// NextFireAt is the next fire time not yet handled; DueAt is when it is to start
	// (NextFireAt plus its jitter).
	NextFireAt time.Time
	DueAt      time.Time
	// BufferedFireAt is the fire time OverlapBufferOne keeps, nil when none.
	BufferedFireAt *time.Time
	// LastFireAt and LastRunID are the fire time of the last run the schedule started and that
	// run; LastError is why the last fire time handled started nothing ("" when it did).
	LastFireAt *time.Time
	LastRunID  string
	LastError  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// ScheduleAdvance is one step of a schedule's state, written only if the schedule still
// stands where the writer read it (From, FromBuffered): of any number of hosts handling the
// same fire time, one writes it and the others find it done.
type ScheduleAdvance struct {
	TenantID, ID string
	// From and FromBuffered are the NextFireAt and BufferedFireAt the writer read.
	From         time.Time
	FromBuffered *time.Time
	// NextFireAt, DueAt and BufferedFireAt replace the schedule's.
	NextFireAt     time.Time
	DueAt          time.Time
	BufferedFireAt *time.Time
	// Started, when set, replaces LastFireAt and LastRunID; LastError always replaces the
	// schedule's.
	Started   *ScheduleStart
	LastError string
}

// ScheduleStart is a run a schedule started for a fire time.
type ScheduleStart struct {
	FireAt time.Time
	RunID  string
}
