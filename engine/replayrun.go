package engine

import (
	"cmp"
	"context"
	"fmt"
	"time"
)

// ReplayRunTimeout bounds in wall time the dry pass of ReplayRun: the client waits for it in
// one request, and the upgrade gate, which replays the same way, is the tool for a journal
// that takes longer.
const ReplayRunTimeout = 30 * time.Second

// ReplayRun replays the tenant's run runID, as its journal stands, against wasm, a module the
// client sent and that is not deployed: the dry replay of the upgrade gate and of wfhost replay
// (DryReplay), so its verdict is the one a deploy through the gate would give this run. The
// module is checked as a deploy's is (size, the tenant's memory) and must declare the run's
// workflow; nothing is stored, and the run does not change.
func (s *Service) ReplayRun(ctx context.Context, tenantID, runID string, wasm []byte) (*ReplayReport, error) {
	limits, err := s.Limits(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("replay run %s: %w", runID, err)
	}
	// The module is checked before the run is read: a module too large or not wasm is the
	// answer whatever the run.
	m, err := s.loadUpload(ctx, tenantID, wasm, limits)
	if err != nil {
		return nil, fmt.Errorf("replay run %s: %w", runID, err)
	}
	run, err := s.cfg.Store.GetRun(ctx, tenantID, runID)
	if err != nil {
		return nil, err
	}
	declared := false
	for _, w := range m.Description.Workflows {
		declared = declared || w.Name == run.Workflow
	}
	if !declared {
		return nil, fmt.Errorf("replay run %s: %w: the module declares no workflow %q", runID, ErrInvalid, run.Workflow)
	}
	journal, err := s.cfg.Store.ListSteps(ctx, tenantID, runID)
	if err != nil {
		return nil, err
	}
	hl := hostLimits(limits)
	hl.WallTime = min(cmp.Or(hl.WallTime, ReplayRunTimeout), ReplayRunTimeout)
	return DryReplay(ctx, s.cfg.Runtime, m, Replay{
		Workflow: run.Workflow, Input: run.Input, RunID: run.ID, CreatedAt: run.CreatedAt,
		Journal: journal, Limits: hl,
	})
}

// ModuleFeatures returns the optional ABI features (abi.Feature*) the tenant's module of that
// digest declares, from the compiled modules this host keeps, so a client can offer what the
// run's module handles (the console's query form).
func (s *Service) ModuleFeatures(ctx context.Context, tenantID, digest string) ([]string, error) {
	mod, err := s.exec.modules.get(ctx, tenantID, digest)
	if err != nil {
		return nil, err
	}
	return mod.Description.Features, nil
}
