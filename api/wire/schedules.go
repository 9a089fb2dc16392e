package wire

import (
	"encoding/json"
	"time"
)

// CreateSchedule is the body of POST /v1/schedules: a schedule that starts runs of Workflow at
// the fire times of Cron (five fields, or six with seconds first, or a descriptor such as
// @daily, in TimeZone, an IANA name, UTC when absent) or of IntervalMs (multiples of it since
// the Unix epoch): exactly one of the two.
type CreateSchedule struct {
	ID              string          `json:"id"`
	Cron            string          `json:"cron,omitempty"`
	TimeZone        string          `json:"timeZone,omitempty"`
	IntervalMs      int64           `json:"intervalMs,omitempty"`
	Workflow        string          `json:"workflow"`
	Version         string          `json:"version,omitempty"`
	Input           json.RawMessage `json:"input,omitempty"`
	Overlap         string          `json:"overlap,omitempty"`
	CatchupWindowMs int64           `json:"catchupWindowMs,omitempty"`
	JitterMs        int64           `json:"jitterMs,omitempty"`
	Paused          bool            `json:"paused,omitempty"`
}

// Schedule is a schedule and where it stands.
type Schedule struct {
	ID              string          `json:"id"`
	Cron            string          `json:"cron,omitempty"`
	TimeZone        string          `json:"timeZone,omitempty"`
	IntervalMs      int64           `json:"intervalMs,omitempty"`
	Workflow        string          `json:"workflow"`
	Version         string          `json:"version,omitempty"`
	Input           json.RawMessage `json:"input"`
	Overlap         string          `json:"overlap"`
	CatchupWindowMs int64           `json:"catchupWindowMs"`
	JitterMs        int64           `json:"jitterMs"`
	Paused          bool            `json:"paused"`
	// NextFireAt is the next fire time not yet handled (where it stood when paused), DueAt
	// when its run starts (the fire time plus its jitter).
	NextFireAt     time.Time  `json:"nextFireAt"`
	DueAt          time.Time  `json:"dueAt"`
	BufferedFireAt *time.Time `json:"bufferedFireAt,omitempty"`
	LastFireAt     *time.Time `json:"lastFireAt,omitempty"`
	LastRunID      string     `json:"lastRunId,omitempty"`
	LastError      string     `json:"lastError,omitempty"`
	CreatedAt      time.Time  `json:"createdAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
}

// SchedulePage lists a tenant's schedules by id.
type SchedulePage struct {
	Schedules []Schedule `json:"schedules"`
}

// ScheduleDeleted answers DELETE /v1/schedules/{id}.
type ScheduleDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// FireTime is one coming fire time and when its run starts (the fire time plus its jitter).
type FireTime struct {
	At  time.Time `json:"at"`
	Due time.Time `json:"due"`
}

// FireTimes answers GET /v1/schedules/{id}/next.
type FireTimes struct {
	ID        string     `json:"id"`
	FireTimes []FireTime `json:"fireTimes"`
}

// Triggered answers POST /v1/schedules/{id}/trigger: Outcome is started (Run is the run),
// skipped (the last run is live and the policy is skip, or one is already buffered),
// buffered (buffer_one: started when the live run ends) or failed (the start was refused: the
// workflow is gone, the input is past the tenant's limit). Note says why no run started.
type Triggered struct {
	Outcome string    `json:"outcome"`
	FireAt  time.Time `json:"fireAt"`
	Run     *Run      `json:"run,omitempty"`
	Note    string    `json:"note,omitempty"`
}
