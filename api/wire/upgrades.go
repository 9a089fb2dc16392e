package wire

import (
	"encoding/json"
	"time"

	"github.com/wfhost/wfhost/abi"
)

// UpgradeSummary is the upgrade gate's outcome of a deploy (POST /v1/modules?upgrade=...);
// GET /v1/upgrades/{id} has the report with every run.
type UpgradeSummary struct {
	ID     string `json:"id"`
	Policy string `json:"policy"`
	// Deployed: the module was bound (never for check; not for a refused strict deploy).
	Deployed bool   `json:"deployed"`
	Refused  string `json:"refused,omitempty"`
	Checked  int    `json:"checked"`
	// Verdicts counts the runs checked by verdict: compatible, diverged, fails, error.
	Verdicts   map[string]int `json:"verdicts"`
	Moved      int            `json:"moved"`
	Pinned     int            `json:"pinned"`
	DurationMs int64          `json:"durationMs"`
}

// UpgradeReport answers GET /v1/upgrades/{id}.
type UpgradeReport struct {
	UpgradeSummary
	Replace   bool            `json:"replace"`
	Digest    string          `json:"digest"`
	Targets   []UpgradeTarget `json:"targets"`
	CreatedAt time.Time       `json:"createdAt"`
	Runs      []UpgradeRun    `json:"runs"`
}

// UpgradeTarget is a workflow version a gated deploy binds, which its checked runs move to.
type UpgradeTarget struct {
	Workflow string `json:"workflow"`
	Version  string `json:"version"`
}

// UpgradeRun is the gate's finding for one open run.
type UpgradeRun struct {
	RunID    string `json:"runId"`
	Workflow string `json:"workflow"`
	Version  string `json:"version"`
	Digest   string `json:"digest"`
	Status   string `json:"status"`
	// Verdict is compatible, diverged, fails (replays, then ends the run failed) or error.
	Verdict    string            `json:"verdict"`
	Moved      bool              `json:"moved"`
	Note       string            `json:"note,omitempty"`
	Journal    int               `json:"journal"`
	Replayed   int               `json:"replayed"`
	Divergence *ReplayDivergence `json:"divergence,omitempty"`
	Stopped    *ReplayStop       `json:"stopped,omitempty"`
	Error      *abi.ErrorInfo    `json:"error,omitempty"`
	Logs       []ReplayLog       `json:"logs,omitempty"`
}

// ReplayStep names a journal entry or a step a workflow reached.
type ReplayStep struct {
	Key   string `json:"key"`
	Kind  string `json:"kind"`
	Event string `json:"event,omitempty"`
}

// ReplayDivergence is where a workflow left a run's journal: entry Seq holds Expected; the
// workflow reached Reached (none: it ended).
type ReplayDivergence struct {
	Seq      int         `json:"seq"`
	Expected ReplayStep  `json:"expected"`
	Reached  *ReplayStep `json:"reached,omitempty"`
	Message  string      `json:"message"`
}

// ReplayStop is where a compatible replay stopped: the first step the journal does not have
// (New) or has without its end.
type ReplayStop struct {
	Seq int        `json:"seq"`
	At  ReplayStep `json:"at"`
	New bool       `json:"new"`
}

// ReplayLog is a line the guest logged during a replay.
type ReplayLog struct {
	Level   string `json:"level"`
	Message string `json:"message"`
	Stream  string `json:"stream,omitempty"`
}

// RunReplay answers POST .../runs/{id}/replay: a dry replay of the run's journal against a
// module the client sent (engine.ReplayReport's JSON). Verdict is compatible or diverged. A
// compatible replay either Stopped at the first step the journal does not have (or has
// without its end), or Ended within the journal with Output or Error, the end the module would
// write. A diverged one has Divergence, and Ended too when the workflow returned before its
// journal's end.
type RunReplay struct {
	Run          string `json:"run"`
	Workflow     string `json:"workflow"`
	ModuleDigest string `json:"moduleDigest"`
	Verdict      string `json:"verdict"`
	// Replayed counts the journal entries the pass reached and replayed, of Journal.
	Replayed       int               `json:"replayed"`
	Journal        int               `json:"journal"`
	Divergence     *ReplayDivergence `json:"divergence,omitempty"`
	Stopped        *ReplayStop       `json:"stopped,omitempty"`
	Ended          bool              `json:"ended"`
	Output         json.RawMessage   `json:"output,omitempty"`
	Error          *abi.ErrorInfo    `json:"error,omitempty"`
	ContinuedAsNew json.RawMessage   `json:"continuedAsNew,omitempty"`
	// Logs are what the guest logged during the pass (outside steps: none runs), at most
	// 1,000; LogsDropped counts the rest.
	Logs        []ReplayLog `json:"logs"`
	LogsDropped int         `json:"logsDropped,omitempty"`
}
