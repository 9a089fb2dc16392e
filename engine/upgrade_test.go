package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// population starts onboarding runs at two points: asleep before the welcome mail (journal:
// create-user, welcome-delay sleeping) and waiting for verification after it (create-user,
// welcome-delay, send-welcome, await-verify waiting).
func population(t *testing.T, h *harness, each int) (asleep, waiting []store.Run) {
	t.Helper()
	for range each {
		asleep = append(asleep, h.start("onboarding", map[string]any{"email": "sleepy@example.com", "delayMs": 3_600_000}))
		waiting = append(waiting, h.start("onboarding", map[string]any{"email": "waiting@example.com", "delayMs": 1, "verifyTimeoutMs": 3_600_000}))
	}
	for _, r := range asleep {
		h.awaitStep(r.ID, "welcome-delay", store.StepSleeping, settle)
	}
	for _, r := range waiting {
		h.awaitStep(r.ID, "await-verify", store.StepWaiting, settle)
	}
	return asleep, waiting
}

func (h *harness) deployGated(name string, opts engine.DeployOptions) (engine.DeployResult, error) {
	h.t.Helper()
	return h.engine.DeployWith(context.Background(), store.DefaultTenant, fixture(h.t, name), opts)
}

// verdicts maps run ids to the report's findings.
func verdicts(rep *engine.UpgradeReport) map[string]engine.UpgradeRun {
	out := map[string]engine.UpgradeRun{}
	for _, r := range rep.Runs {
		out[r.RunID] = r
	}
	return out
}

func (h *harness) verify(runID string) {
	h.t.Helper()
	payload := json.RawMessage(`{"userId":"` + h.userID(runID) + `","via":"email"}`)
	if _, err := h.engine.Signal(context.Background(), store.DefaultTenant, engine.SignalRequest{RunID: runID, Event: "verify", Payload: payload}); err != nil {
		h.t.Fatal(err)
	}
}

// TestUpgradeGateAppendedStep: a new version with a step appended after the last one any open
// run has journaled is compatible with every run; upgrade moves them all to the new version, and
// a moved run then runs the new step.
func TestUpgradeGateAppendedStep(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h := setup(t, harnessOptions{metrics: reg})
	h.deploy("examples.wasm", false)
	asleep, waiting := population(t, h, 2)

	old := h.getWorkflowDigest("1")
	// Replace: the module's other workflows stay version 1, rebound; onboarding is version 2.
	res, err := h.deployGated("examples_appended.wasm", engine.DeployOptions{Replace: true, Upgrade: engine.UpgradeMove})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Upgrade
	if !rep.Deployed || rep.Checked != 4 || rep.Verdicts[engine.GateCompatible] != 4 || rep.Moved != 4 || rep.Pinned != 0 {
		t.Fatalf("report: %+v", rep)
	}
	v := verdicts(rep)
	for _, r := range asleep {
		if got := v[r.ID]; got.Stopped == nil || got.Stopped.Seq != 1 || got.Stopped.At.Key != "welcome-delay" || got.Stopped.New {
			t.Fatalf("asleep run: %+v, want stopped at its unfinished sleep (entry 1)", got)
		}
	}
	for _, r := range waiting {
		if got := v[r.ID]; got.Stopped == nil || got.Stopped.Seq != 3 || got.Stopped.At.Key != "await-verify" {
			t.Fatalf("waiting run: %+v, want stopped at its wait (entry 3)", got)
		}
	}
	for _, r := range append(asleep, waiting...) {
		if got := h.getRun(r.ID); got.Digest != res.Module.Digest || got.Version != "2" {
			t.Fatalf("run %s is version %s on %.12s, want version 2 on the new module %.12s", r.ID, got.Version, got.Digest, res.Module.Digest)
		}
	}
	if h.getWorkflowDigest("1") != old || h.getWorkflowDigest("2") != res.Module.Digest {
		t.Fatalf("version 1 is bound to %.12s, 2 to %.12s", h.getWorkflowDigest("1"), h.getWorkflowDigest("2"))
	}
	// A moved run goes on on the new code: verified, it runs the appended step.
	h.verify(waiting[0].ID)
	if r := h.await(waiting[0].ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("moved run: %s %+v\n%s", r.Status, r.Error, h.journalString(r.ID))
	}
	wantKeys(t, h.keys(waiting[0].ID), "create-user", "welcome-delay", "send-welcome", "await-verify", "record-verified")
	if n := counterValue(t, reg, "wfhost_upgrade_runs_checked_total", "compatible"); n != 4 {
		t.Fatalf("wfhost_upgrade_runs_checked_total{verdict=compatible} = %v, want 4", n)
	}
	// The report is kept.
	kept, err := h.engine.UpgradeReport(context.Background(), store.DefaultTenant, rep.ID)
	if err != nil || kept.Moved != 4 || len(kept.Runs) != 4 {
		t.Fatalf("kept report: %+v, %v", kept, err)
	}
}

// TestUpgradeGateRenamedStep: a step renamed diverges from the runs that journaled it and not
// from those that have not reached it. strict refuses; check reports and changes nothing;
// upgrade moves the runs that pass and pins the rest, which finish on the old code.
func TestUpgradeGateRenamedStep(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	old := h.deploy("examples.wasm", false).Module.Digest
	asleep, waiting := population(t, h, 2)

	// strict: refused, nothing bound or moved, the report says why.
	res, err := h.deployGated("examples_renamed.wasm", engine.DeployOptions{Replace: true, Upgrade: engine.UpgradeStrict})
	if !errors.Is(err, engine.ErrUpgradeRefused) || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("strict deploy of a renamed step: %v, want refused", err)
	}
	rep := res.Upgrade
	if rep == nil || rep.Deployed || rep.Refused == "" || rep.Verdicts[engine.GateDiverged] != 2 || rep.Verdicts[engine.GateCompatible] != 2 {
		t.Fatalf("strict report: %+v", rep)
	}
	for _, r := range waiting {
		d := verdicts(rep)[r.ID].Divergence
		if d == nil || d.Seq != 2 || d.Expected.Key != "send-welcome" || d.Reached == nil || d.Reached.Key != "send-greeting" || d.Reached.Kind != store.KindRun {
			t.Fatalf("waiting run's divergence: %+v", d)
		}
	}
	if w, err := h.store.ResolveWorkflow(context.Background(), store.DefaultTenant, "onboarding", "1"); err != nil || w.Digest != old {
		t.Fatalf("after a refused deploy the version is bound to %.12s (%v), want %.12s", w.Digest, err, old)
	}

	// check: the same findings, nothing bound or moved.
	res, err = h.deployGated("examples_renamed.wasm", engine.DeployOptions{Replace: true, Upgrade: engine.UpgradeCheck})
	if err != nil || res.Upgrade.Deployed || res.Upgrade.Checked != 4 || res.Upgrade.Verdicts[engine.GateDiverged] != 2 {
		t.Fatalf("check: %+v, %v", res.Upgrade, err)
	}
	for _, r := range append(asleep, waiting...) {
		if got := h.getRun(r.ID); got.Digest != old {
			t.Fatalf("check moved run %s", r.ID)
		}
	}

	// upgrade: the asleep runs move, the waiting ones stay pinned to the old module.
	res, err = h.deployGated("examples_renamed.wasm", engine.DeployOptions{Replace: true, Upgrade: engine.UpgradeMove})
	if err != nil || !res.Upgrade.Deployed || res.Upgrade.Moved != 2 || res.Upgrade.Pinned != 2 {
		t.Fatalf("upgrade: %+v, %v", res.Upgrade, err)
	}
	renamed := res.Module.Digest
	for _, r := range asleep {
		if got := h.getRun(r.ID); got.Digest != renamed {
			t.Fatalf("asleep run %s is on %.12s, want %.12s", r.ID, got.Digest, renamed)
		}
	}
	// A pinned run finishes on the code it started with, though its version is rebound.
	h.verify(waiting[0].ID)
	r := h.await(waiting[0].ID, settle)
	if r.Status != store.StatusCompleted || r.Digest != old {
		t.Fatalf("pinned run: %s on %.12s, error %+v", r.Status, r.Digest, r.Error)
	}
	// A new run takes the new code.
	fresh := h.start("onboarding", map[string]any{"email": "new@example.com", "delayMs": 3_600_000})
	if fresh.Digest != renamed {
		t.Fatalf("a new run is on %.12s, want %.12s", fresh.Digest, renamed)
	}
}

func TestUpgradePolicyIsChecked(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"Upgrade", "yes", "check ", "\xff", strings.Repeat("x", 10000)} {
		if _, err := engine.ParseUpgradePolicy(bad); !errors.Is(err, engine.ErrInvalid) || len(err.Error()) > 200 {
			t.Fatalf("policy %.20q: %v", bad, err)
		}
	}
}

func (h *harness) getRun(id string) store.Run {
	h.t.Helper()
	r, err := h.store.GetRun(context.Background(), store.DefaultTenant, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

func counterValue(t *testing.T, reg *prometheus.Registry, name, verdict string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "verdict" && l.GetValue() == verdict {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{verdict=%q}", name, verdict)
	return 0
}

func (h *harness) getWorkflowDigest(version string) string {
	h.t.Helper()
	w, err := h.store.ResolveWorkflow(context.Background(), store.DefaultTenant, "onboarding", version)
	if err != nil {
		h.t.Fatal(err)
	}
	return w.Digest
}
