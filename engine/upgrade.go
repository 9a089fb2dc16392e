package engine

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// The upgrade gate: a deploy that first replays every open run of the workflows its module
// declares against the module, dry (DryReplay), and then reports, moves the runs that pass, or
// refuses, by policy. See RATIONALE.md, "The upgrade gate".

// UpgradePolicy says what a deploy through the upgrade gate does with what the gate found.
type UpgradePolicy string

const (
	// UpgradeOff: no gate; the deploy binds as it always did (replace moves every live run).
	UpgradeOff UpgradePolicy = ""
	// UpgradeCheck: report only. Nothing is bound and no run moves: the deploy is a rehearsal.
	UpgradeCheck UpgradePolicy = "check"
	// UpgradeMove: bind the module and move the runs that pass to it; the rest stay pinned to
	// the module they are on.
	UpgradeMove UpgradePolicy = "upgrade"
	// UpgradeStrict: as UpgradeMove when every run passes; otherwise refuse the deploy
	// (ErrUpgradeRefused), binding nothing.
	UpgradeStrict UpgradePolicy = "strict"
)

// ParseUpgradePolicy reads a policy's name.
func ParseUpgradePolicy(s string) (UpgradePolicy, error) {
	p := UpgradePolicy(s)
	return p, p.check()
}

func (p UpgradePolicy) check() error {
	switch p {
	case UpgradeOff, UpgradeCheck, UpgradeMove, UpgradeStrict:
		return nil
	}
	return fmt.Errorf("%w: upgrade policy %.40q is not check, upgrade or strict", ErrInvalid, string(p))
}

// ErrUpgradeRefused is the error of a strict deploy a run did not pass: it wraps
// store.ErrConflict, and the deploy's report says which runs.
var ErrUpgradeRefused = fmt.Errorf("%w: upgrade refused", store.ErrConflict)

// GateVerdict is what the gate found for one run.
type GateVerdict string

const (
	// GateCompatible: the module replays the run's journal (DryReplay's compatible) and does
	// not end it failed there.
	GateCompatible GateVerdict = "compatible"
	// GateDiverged: the module leaves the run's journal (Divergence says where).
	GateDiverged GateVerdict = "diverged"
	// GateFails: the module replays the journal but then ends the run failed (a trap, a
	// guest fault, or the workflow's error) within it.
	GateFails GateVerdict = "fails"
	// GateError: no replay could be made (Note says why).
	GateError GateVerdict = "error"
)

// gateVerdicts are the verdicts in the order reports count them.
var gateVerdicts = []GateVerdict{GateCompatible, GateDiverged, GateFails, GateError}

// maxGateLogs bounds the guest's log lines a report keeps per run that did not pass; a run that
// passed keeps none.
const maxGateLogs = 20

// UpgradeRun is the gate's finding for one run.
type UpgradeRun struct {
	RunID    string          `json:"runId"`
	Workflow string          `json:"workflow"`
	Version  string          `json:"version"`
	Digest   string          `json:"digest"` // the module the run was on when checked
	Status   store.RunStatus `json:"status"`
	Verdict  GateVerdict     `json:"verdict"`
	// Moved: the run now runs on the deployed module (and its version).
	Moved bool `json:"moved"`
	// Note says why a run that passed did not move, or why no replay could be made.
	Note       string         `json:"note,omitempty"`
	Journal    int            `json:"journal"`
	Replayed   int            `json:"replayed"`
	Divergence *Divergence    `json:"divergence,omitempty"`
	Stopped    *ReplayStop    `json:"stopped,omitempty"`
	Error      *abi.ErrorInfo `json:"error,omitempty"`
	Logs       []ReplayLog    `json:"logs,omitempty"`
}

// UpgradeTarget is a workflow version the deploy binds, which its checked runs move to.
type UpgradeTarget struct {
	Workflow string `json:"workflow"`
	Version  string `json:"version"`
}

// UpgradeReport is the upgrade gate's report of one deploy, kept in the store by ID.
type UpgradeReport struct {
	ID        string          `json:"id"`
	Policy    UpgradePolicy   `json:"policy"`
	Replace   bool            `json:"replace"`
	Digest    string          `json:"digest"`
	Targets   []UpgradeTarget `json:"targets"`
	CreatedAt time.Time       `json:"createdAt"`
	// Deployed: the module was bound (never for check; not for a refused strict deploy).
	Deployed bool `json:"deployed"`
	// Refused says why a strict deploy was refused.
	Refused string `json:"refused,omitempty"`
	// DurationMs is the time the checks took, listing the runs included.
	DurationMs int64               `json:"durationMs"`
	Checked    int                 `json:"checked"`
	Verdicts   map[GateVerdict]int `json:"verdicts"`
	Moved      int                 `json:"moved"`
	Pinned     int                 `json:"pinned"`
	Runs       []UpgradeRun        `json:"runs"`
}

// gatePage is how many open runs the gate lists at a time: their journals are in memory
// together until checked.
const gatePage = 256

// upgradeMetrics count the gate's work.
type upgradeMetrics struct {
	checked *prometheus.CounterVec
	moved   prometheus.Counter
}

func newUpgradeMetrics(reg prometheus.Registerer) *upgradeMetrics {
	m := &upgradeMetrics{
		checked: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_upgrade_runs_checked_total", Help: "Open runs the upgrade gate replayed against a deployed module, by verdict (compatible, diverged, fails, error).",
		}, []string{"verdict"}),
		moved: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wfhost_upgrade_runs_moved_total", Help: "Runs the upgrade gate moved to a deployed module.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.checked, m.moved)
	}
	return m
}

// deployThroughGate checks d's workflows' open runs against d's module and applies opts'
// policy. The report is kept whatever the policy (GetUpgradeReport).
func (s *Service) deployThroughGate(ctx context.Context, d deployment, opts DeployOptions) (DeployResult, error) {
	start := time.Now()
	rep := &UpgradeReport{
		ID: newReportID(), Policy: opts.Upgrade, Replace: opts.Replace, Digest: d.mod.Digest,
		CreatedAt: s.cfg.Clock.Now().UTC(), Verdicts: map[GateVerdict]int{}, Runs: []UpgradeRun{},
	}
	// A run moves to the version of its workflow this deploy binds; a module that declares
	// several versions of one workflow moves runs to the last it declares.
	targets := map[string]string{}
	for _, w := range d.wfs {
		if _, ok := targets[w.Name]; !ok {
			rep.Targets = append(rep.Targets, UpgradeTarget{Workflow: w.Name})
		}
		targets[w.Name] = w.Version
	}
	for i := range rep.Targets {
		rep.Targets[i].Version = targets[rep.Targets[i].Workflow]
	}
	var moves []store.RunMove
	for _, t := range rep.Targets {
		runs, err := s.checkOpenRuns(ctx, d, t)
		if err != nil {
			return DeployResult{}, fmt.Errorf("deploy: upgrade gate: %w", err)
		}
		for _, r := range runs {
			rep.Verdicts[r.Verdict]++
			s.upgradeMetrics.checked.WithLabelValues(string(r.Verdict)).Inc()
			if r.Verdict == GateCompatible {
				moves = append(moves, store.RunMove{RunID: r.RunID, From: r.Digest, Entries: r.Journal, Version: t.Version})
			}
		}
		rep.Runs = append(rep.Runs, runs...)
	}
	rep.Checked = len(rep.Runs)
	rep.DurationMs = time.Since(start).Milliseconds()

	var res DeployResult
	failed := rep.Checked - rep.Verdicts[GateCompatible]
	switch {
	case opts.Upgrade == UpgradeCheck:
	case opts.Upgrade == UpgradeStrict && failed > 0:
		rep.Refused = fmt.Sprintf("%d of %d open runs did not pass (%d diverged, %d fail, %d could not be replayed)",
			failed, rep.Checked, rep.Verdicts[GateDiverged], rep.Verdicts[GateFails], rep.Verdicts[GateError])
	default:
		stored, moved, err := s.cfg.Store.UpgradeModule(ctx, d.mod, d.wfs, opts.Replace, moves)
		if err != nil {
			return DeployResult{}, fmt.Errorf("deploy: %w", err)
		}
		res = s.deployed(d, stored)
		rep.Deployed = true
		in := make(map[string]bool, len(moved))
		for _, id := range moved {
			in[id] = true
		}
		for i := range rep.Runs {
			r := &rep.Runs[i]
			switch {
			case in[r.RunID]:
				r.Moved = true
				rep.Moved++
			case r.Verdict == GateCompatible:
				r.Note = "not moved: it changed after the check (a host held it, or its journal changed); a deploy of the same module through the gate checks it again"
			}
		}
		s.upgradeMetrics.moved.Add(float64(rep.Moved))
	}
	rep.Pinned = rep.Checked - rep.Moved
	if res.Module.Digest == "" {
		res.Module = d.mod
		res.Module.Bytes = nil
	}
	res.Upgrade = rep
	body, err := json.Marshal(rep)
	if err != nil {
		return DeployResult{}, fmt.Errorf("deploy: upgrade report: %w", err)
	}
	if err := s.cfg.Store.PutUpgradeReport(ctx, store.UpgradeReport{TenantID: d.tenantID, ID: rep.ID, Report: body}); err != nil {
		return res, fmt.Errorf("deploy: keep upgrade report: %w", err)
	}
	if rep.Refused != "" {
		return res, fmt.Errorf("deploy: %w: %s; report %s", ErrUpgradeRefused, rep.Refused, rep.ID)
	}
	return res, nil
}

// checkOpenRuns replays every open run of t's workflow that is not on d's module against it,
// on a pool of one worker per processor, and returns the findings in run id order. The
// compiled module is shared: each replay only instantiates it.
func (s *Service) checkOpenRuns(ctx context.Context, d deployment, t UpgradeTarget) ([]UpgradeRun, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type job struct {
		run store.OpenRun
		out *UpgradeRun
	}
	jobs := make(chan job)
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
	)
	limits := hostLimits(d.limits)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if err := s.checkRun(ctx, d.m, limits, j.run, j.out); err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
					cancel()
				}
			}
		}()
	}
	var pages [][]UpgradeRun
	listErr := func() error {
		defer close(jobs)
		after := ""
		for {
			page, err := s.cfg.Store.ListOpenRuns(ctx, store.OpenRunsQuery{
				TenantID: d.tenantID, Workflow: t.Workflow, Except: d.mod.Digest, After: after, Limit: gatePage,
			})
			if err != nil {
				return err
			}
			out := make([]UpgradeRun, len(page))
			pages = append(pages, out)
			for i, r := range page {
				select {
				case jobs <- job{run: r, out: &out[i]}:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if len(page) < gatePage {
				return nil
			}
			after = page[len(page)-1].Run.ID
		}
	}()
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if listErr != nil {
		return nil, listErr
	}
	var all []UpgradeRun
	for _, p := range pages {
		all = append(all, p...)
	}
	return all, nil
}

// checkRun replays one run against m into out. Its error is for a check that could not go on
// (ctx ended); a run that cannot be replayed is GateError in out.
func (s *Service) checkRun(ctx context.Context, m *host.Module, limits host.Limits, r store.OpenRun, out *UpgradeRun) error {
	*out = UpgradeRun{
		RunID: r.Run.ID, Workflow: r.Run.Workflow, Version: r.Run.Version, Digest: r.Run.Digest,
		Status: r.Run.Status, Journal: len(r.Journal),
	}
	rep, err := DryReplay(ctx, s.cfg.Runtime, m, Replay{
		Workflow: r.Run.Workflow, Input: r.Run.Input, RunID: r.Run.ID, CreatedAt: r.Run.CreatedAt,
		Journal: r.Journal, Limits: limits,
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		out.Verdict, out.Note = GateError, err.Error()
		return nil
	}
	out.Replayed, out.Divergence, out.Stopped, out.Error = rep.Replayed, rep.Divergence, rep.Stopped, rep.Error
	switch {
	case rep.Verdict == ReplayDiverged:
		out.Verdict = GateDiverged
	case rep.Ended && rep.Error != nil:
		out.Verdict = GateFails
	default:
		out.Verdict = GateCompatible
		return nil
	}
	out.Logs = rep.Logs[:min(len(rep.Logs), maxGateLogs)]
	return nil
}

// UpgradeReport returns a kept report of the tenant's.
func (s *Service) UpgradeReport(ctx context.Context, tenantID, id string) (*UpgradeReport, error) {
	kept, err := s.cfg.Store.GetUpgradeReport(ctx, tenantID, id)
	if err != nil {
		return nil, err
	}
	var rep UpgradeReport
	if err := json.Unmarshal(kept.Report, &rep); err != nil {
		return nil, fmt.Errorf("upgrade report %s: %w", id, err)
	}
	return &rep, nil
}

// newReportID is a random (version 4) UUID.
func newReportID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
