package api

import (
	"encoding/json"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// The JSON shapes of the API, camelCase, separate from the store's records so the wire format
// changes only on purpose.

type runView struct {
	ID             string          `json:"id"`
	Workflow       string          `json:"workflow"`
	Version        string          `json:"version"`
	Status         store.RunStatus `json:"status"`
	Input          json.RawMessage `json:"input"`
	Output         json.RawMessage `json:"output,omitempty"`
	Error          *abi.ErrorInfo  `json:"error,omitempty"`
	IdempotencyKey string          `json:"idempotencyKey,omitempty"`
	RetentionDays  int             `json:"retentionDays"`
	ModuleDigest   string          `json:"moduleDigest"`
	Activations    int             `json:"activations"`
	CreatedAt      time.Time       `json:"createdAt"`
	StartedAt      *time.Time      `json:"startedAt,omitempty"`
	CompletedAt    *time.Time      `json:"completedAt,omitempty"`
	UpdatedAt      time.Time       `json:"updatedAt"`
}

func viewRun(r store.Run) runView {
	return runView{
		ID: r.ID, Workflow: r.Workflow, Version: r.Version, Status: r.Status, Input: r.Input,
		Output: r.Output, Error: r.Error, IdempotencyKey: r.IdempotencyKey, RetentionDays: r.RetentionDays,
		ModuleDigest: r.Digest, Activations: r.Activations, CreatedAt: r.CreatedAt, StartedAt: r.StartedAt,
		CompletedAt: r.CompletedAt, UpdatedAt: r.UpdatedAt,
	}
}

type stepView struct {
	Seq         int              `json:"seq"`
	Key         string           `json:"key"`
	Kind        store.StepKind   `json:"kind"`
	Status      store.StepStatus `json:"status"`
	Attempt     int              `json:"attempt,omitempty"`
	Output      json.RawMessage  `json:"output,omitempty"`
	Error       *abi.ErrorInfo   `json:"error,omitempty"`
	WakeAt      *time.Time       `json:"wakeAt,omitempty"`
	Event       string           `json:"event,omitempty"`
	Match       json.RawMessage  `json:"match,omitempty"`
	StartedAt   time.Time        `json:"startedAt"`
	CompletedAt *time.Time       `json:"completedAt,omitempty"`
	DurationMs  *float64         `json:"durationMs,omitempty"`
	// Outbound are the HTTP requests the step made (or tried), in order.
	Outbound []outboundView `json:"outbound,omitempty"`
}

func viewStep(s store.Step) stepView {
	v := stepView{
		Seq: s.Seq, Key: s.Key, Kind: s.Kind, Status: s.Status, Attempt: s.Attempt, Output: s.Output,
		Error: s.Error, WakeAt: s.WakeAt, Event: s.Event, Match: s.Match, StartedAt: s.StartedAt,
		CompletedAt: s.CompletedAt,
	}
	if s.CompletedAt != nil {
		ms := float64(s.CompletedAt.Sub(s.StartedAt).Microseconds()) / 1000
		v.DurationMs = &ms
	}
	return v
}

type moduleView struct {
	Digest     string    `json:"digest"`
	Size       int       `json:"size"`
	ABIVersion int       `json:"abiVersion"`
	CreatedAt  time.Time `json:"createdAt,omitzero"`
}

type workflowView struct {
	Name          string          `json:"name"`
	Version       string          `json:"version"`
	RetentionDays int             `json:"retentionDays,omitempty"`
	Retry         abi.RetryPolicy `json:"retry"`
	Triggers      []string        `json:"triggers,omitempty"`
	ModuleDigest  string          `json:"moduleDigest"`
}
