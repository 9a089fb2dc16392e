package store

import (
	"encoding/json"
	"time"
)

// OpenRun is an open run with its whole journal, as the upgrade gate replays it.
type OpenRun struct {
	Run     Run
	Journal []Step // from Seq 0, whatever snapshot the run has
}

// OpenRunsQuery names the runs ListOpenRuns pages through: the tenant's open runs (pending,
// running or nondeterministic) of Workflow, any version, on a module other than Except.
type OpenRunsQuery struct {
	TenantID string
	Workflow string
	Except   string // a digest: the module being deployed, whose runs need no check
	After    string // a run id: the page starts after it ("" from the start)
	Limit    int
}

// RunMove asks UpgradeModule to move a run the gate checked to the deployed module.
type RunMove struct {
	RunID string
	// From and Entries are what the gate checked: the run's digest and its journal's length.
	// A run no longer on From, or whose journal has more or fewer entries, is not moved.
	From    string
	Entries int
	// Version is the version the run moves to (its digest is the deployed module's).
	Version string
	// Digest is the module of Version, for UnpauseRun; UpgradeModule moves runs to the module
	// it deploys and does not read it.
	Digest string
}

// UpgradeReport is a stored report of an upgrade gate: the engine's JSON, kept as given.
type UpgradeReport struct {
	TenantID  string
	ID        string
	CreatedAt time.Time
	Report    json.RawMessage
}
