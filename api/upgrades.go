package api

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
)

// The upgrade gate's API: POST /v1/modules?upgrade=check|upgrade|strict puts a deploy through
// it (its answer carries the summary), and GET /v1/upgrades/{id} returns a kept report.

// upgradeParam reads a deploy's upgrade policy ("" when absent: no gate).
func upgradeParam(r *http.Request) (engine.UpgradePolicy, error) {
	p, err := engine.ParseUpgradePolicy(r.URL.Query().Get("upgrade"))
	if err != nil {
		return "", badRequest("invalid_request", "upgrade must be check, upgrade or strict")
	}
	return p, nil
}

func viewUpgradeSummary(rep *engine.UpgradeReport) *wire.UpgradeSummary {
	if rep == nil {
		return nil
	}
	verdicts := map[string]int{}
	for v, n := range rep.Verdicts {
		verdicts[string(v)] = n
	}
	return &wire.UpgradeSummary{
		ID: rep.ID, Policy: string(rep.Policy), Deployed: rep.Deployed, Refused: rep.Refused, Checked: rep.Checked,
		Verdicts: verdicts, Moved: rep.Moved, Pinned: rep.Pinned, DurationMs: rep.DurationMs,
	}
}

// GET /v1/upgrades/{id}
func (h *Handler) getUpgrade(w http.ResponseWriter, r *http.Request) error {
	rep, err := h.cfg.Service.UpgradeReport(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	// The engine's report and the wire's have the same JSON by construction (wire's fields
	// are the engine's, named alike): one encoding carries the per-run findings over without
	// a second copy of every field's conversion to keep in step.
	body, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("upgrade report: %w", err)
	}
	var out wire.UpgradeReport
	if err := json.Unmarshal(body, &out); err != nil {
		return fmt.Errorf("upgrade report: %w", err)
	}
	out.UpgradeSummary = *viewUpgradeSummary(rep)
	writeJSON(w, http.StatusOK, out)
	return nil
}
