package wire

import (
	"time"

	"github.com/wfhost/wfhost/abi"
)

// Module is an uploaded .wasm module.
type Module struct {
	Digest     string    `json:"digest"` // lowercase hex sha256 of the module
	Size       int       `json:"size"`
	ABIVersion int       `json:"abiVersion"`
	CreatedAt  time.Time `json:"createdAt,omitzero"`
}

// ModulePage lists a tenant's modules.
type ModulePage struct {
	Modules []Module `json:"modules"`
}

// Workflow is one workflow version a module declares, as a deploy bound it.
type Workflow struct {
	Name          string          `json:"name"`
	Version       string          `json:"version"`
	RetentionDays int             `json:"retentionDays,omitempty"`
	Retry         abi.RetryPolicy `json:"retry"`
	// Triggers are the broadcast events that start a run of it.
	Triggers     []string `json:"triggers,omitempty"`
	ModuleDigest string   `json:"moduleDigest"`
}

// Deployed answers POST /v1/modules: the module and the workflows it declares.
type Deployed struct {
	Module
	Workflows []Workflow `json:"workflows"`
	// Upgrade is the upgrade gate's outcome, for a deploy made with ?upgrade=.
	Upgrade *UpgradeSummary `json:"upgrade,omitempty"`
}

// WorkflowSummary is one workflow name with its versions and its runs counted by status.
type WorkflowSummary struct {
	Name          string         `json:"name"`
	LatestVersion string         `json:"latestVersion"`
	Versions      []string       `json:"versions"`
	RunCounts     map[string]int `json:"runCounts"`
	// Paused says the whole workflow is paused; PausedVersions the versions paused on their
	// own (POST /v1/workflows/{name}/pause).
	Paused         bool     `json:"paused,omitempty"`
	PausedVersions []string `json:"pausedVersions,omitempty"`
}

// WorkflowPage lists a tenant's workflows.
type WorkflowPage struct {
	Workflows []WorkflowSummary `json:"workflows"`
}
