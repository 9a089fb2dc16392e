package wire

import (
	"encoding/json"
	"time"
)

// PutHook is the body of PUT /v1/hooks/{id}: for the runs of Workflow (absent: every workflow
// of the tenant) that end in one of When, start Start's workflow with the ended run as input,
// or POST the same to Webhook: exactly one of the two (ABI.md §7's onEnd entry, plus the
// workflow it applies to).
type PutHook struct {
	Workflow string     `json:"workflow,omitempty"`
	When     []string   `json:"when"`
	Start    *HookStart `json:"start,omitempty"`
	Webhook  string     `json:"webhook,omitempty"`
}

// HookStart names the workflow a start hook starts ("" version: the latest).
type HookStart struct {
	Workflow string `json:"workflow"`
	Version  string `json:"version,omitempty"`
}

// Hook is one of the tenant's hooks: set through the API (source "tenant") or declared by a
// module's onEnd (source "module", for one workflow version).
type Hook struct {
	ID        string     `json:"id"`
	Source    string     `json:"source"`
	Workflow  string     `json:"workflow,omitempty"`
	Version   string     `json:"version,omitempty"`
	When      []string   `json:"when"`
	Start     *HookStart `json:"start,omitempty"`
	Webhook   string     `json:"webhook,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	// SigningSecret is the tenant's webhook signing secret, in the answer that created it (the
	// tenant's first webhook) and never again.
	SigningSecret string `json:"signingSecret,omitempty"`
}

// HookPage lists the tenant's hooks by id.
type HookPage struct {
	Hooks []Hook `json:"hooks"`
}

// HookDeleted answers DELETE /v1/hooks/{id}.
type HookDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// SigningSecret answers POST /v1/hooks/signing-secret: the tenant's new signing secret, shown
// this once.
type SigningSecret struct {
	SigningSecret string `json:"signingSecret"`
}

// HookAttempt is one try of a webhook delivery.
type HookAttempt struct {
	At         time.Time `json:"at"`
	Status     int       `json:"status,omitempty"`
	Error      string    `json:"error,omitempty"`
	DurationMs float64   `json:"durationMs"`
}

// HookDelivery is one hook of one ended run.
type HookDelivery struct {
	ID     string `json:"id"`
	RunID  string `json:"runId"`
	HookID string `json:"hookId"`
	Kind   string `json:"kind"`
	Target string `json:"target"`
	// Payload is the started run's input or the webhook's body.
	Payload  json.RawMessage `json:"payload"`
	Depth    int             `json:"depth"`
	Status   string          `json:"status"`
	Attempts int             `json:"attempts"`
	// AttemptLog is every webhook attempt, oldest first.
	AttemptLog []HookAttempt `json:"attemptLog"`
	LastError  string        `json:"lastError,omitempty"`
	// StartedRunID is the run a start hook started: that run's triggeredBy is RunID.
	StartedRunID string     `json:"startedRunId,omitempty"`
	NextAt       *time.Time `json:"nextAt,omitempty"`
	CreatedAt    time.Time  `json:"createdAt"`
	UpdatedAt    time.Time  `json:"updatedAt"`
}

// DeliveryPage lists deliveries, newest first.
type DeliveryPage struct {
	Deliveries []HookDelivery `json:"deliveries"`
}
