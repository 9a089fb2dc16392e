package engine_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// refusingResumes is a store on which no parked pass can be resumed: every pass that parks is
// evicted when its run is due, and the run replays (parking.go's fallback).
type refusingResumes struct{ store.Store }

func (refusingResumes) ResumeRun(context.Context, store.ResumeParams) (store.Claim, bool, error) {
	return store.Claim{}, false, nil
}

// parkingModes are the ways a run that suspends can go on: its pass parked and resumed with no
// replay, parked and then evicted (its run replays), never parked (parking off), or never
// parked and restored from a durable snapshot taken at every step (snapshots.go), or never
// parked and replayed from journals read two entries at a time.
var parkingModes = []struct {
	name string
	opts harnessOptions
}{
	{"parked", harnessOptions{}},
	// The safety poll is put off: it wakes the claimer at the store's next due time, and a
	// claim made then hands the run to its parked pass before the refused resume evicts it.
	{"evicted", harnessOptions{pollInterval: time.Hour, wrapStore: func(s store.Store) store.Store { return refusingResumes{s} }}},
	{"replayed", harnessOptions{parkMemory: -1}},
	{"restored", harnessOptions{parkMemory: -1, snapshotEvery: 1}},
	// Claims read two entries of a journal and replays the rest two at a time (journal.page).
	{"paged", harnessOptions{parkMemory: -1, journalWindow: 2, wrapStore: func(s store.Store) store.Store { return countingPages{s} }}},
}

// pagesRead counts the journal pages read through countingPages, over the whole test process.
var pagesRead atomic.Int64

// countingPages is a store that counts its JournalPage calls.
type countingPages struct{ store.Store }

func (c countingPages) JournalPage(ctx context.Context, l store.Lease, from, limit int) ([]store.Step, bool, error) {
	pagesRead.Add(1)
	return c.Store.JournalPage(ctx, l, from, limit)
}

// snapshotted are the guest languages whose modules the host transforms for snapshots by
// default: standard Go's modules are over host.SnapshotConfig.MaxModuleBytes, and Extism's
// go through go-sdk, which snapshots cannot reach (host/snapshot/RATIONALE.md).
var snapshotted = map[string]bool{"assemblyscript": true, "rust": true, "tinygo": true}

// TestParkedEvictedRestoredAndReplayedRunsWriteTheSameJournal runs the conformance scenarios
// whose runs suspend (sleeps, a retry backoff, a wait resolved by a signal, a wait that times
// out) in every guest language in each parking mode, and requires the same transcript from all
// of them. The metrics show each mode did what it says: the parked mode resumed passes and
// evicted none, the evicted mode evicted passes and resumed none by its timer (a claim may still
// hand a run over), the replayed mode parked nothing, and the restored mode restored its runs
// from snapshots in the languages that take them (and took none in the others).
func TestParkedEvictedRestoredAndReplayedRunsWriteTheSameJournal(t *testing.T) {
	t.Parallel()
	suspending := map[string]bool{"OnboardingResolvedBySignal": true, "OnboardingTimesOut": true, "PollingLoop": true,
		"ChildWorkflowsComplete": true, "ChildCancelledWithItsParent": true}
	beforeAnyStep := map[string]bool{"ChildWorkflowsComplete": true, "ChildCancelledWithItsParent": true}
	var (
		mu        sync.Mutex
		evictions float64 // in the evicted mode, over every scenario and language
	)
	got := map[string]map[string]transcript{} // scenario/lang -> mode -> transcript
	t.Run("modes", func(t *testing.T) {
		for _, sc := range conformanceScenarios {
			if !suspending[sc.name] {
				continue
			}
			for _, fx := range guestFixtures {
				for _, mode := range parkingModes {
					t.Run(sc.name+"/"+fx.lang+"/"+mode.name, func(t *testing.T) {
						t.Parallel()
						reg := prometheus.NewRegistry()
						opts := mode.opts
						opts.metrics = reg
						h := setup(t, opts)
						h.deploy(fx.file, false)
						tr := sc.run(t, h, h.store)
						m := gathered(t, reg)
						resumed := m["wfhost_park_resumes_total{by=timer}"] + m["wfhost_park_resumes_total{by=claim}"]
						evicted := m["wfhost_park_evictions_total{reason=not_resumable}"]
						switch mode.name {
						case "parked":
							if resumed == 0 || evicted != 0 {
								t.Errorf("parked: %v passes resumed, %v evicted; want some resumed and none evicted", resumed, evicted)
							}
						case "evicted":
							// A claim of the run may still come first and hand it over (a
							// wake-up of the claimer for another reason): evictions are
							// counted over the whole mode below.
							if m["wfhost_park_resumes_total{by=timer}"] != 0 {
								t.Errorf("evicted: %v passes resumed by their timer; want none", m["wfhost_park_resumes_total{by=timer}"])
							}
							mu.Lock()
							evictions += evicted
							mu.Unlock()
						case "replayed":
							if m["wfhost_parks_total{}"] != 0 {
								t.Errorf("replayed: %v passes parked with parking off", m["wfhost_parks_total{}"])
							}
						case "restored":
							restored, replayed := m["wfhost_snapshot_restores_total{outcome=restored}"], m["wfhost_snapshot_restores_total{outcome=replayed}"]
							taken := m["wfhost_snapshots_total{}"]
							// A snapshot is taken at step_run only (host/snapshots.go): a parent
							// suspends at its child step before any, so it has none to restore.
							if snapshotted[fx.lang] && !beforeAnyStep[sc.name] && (restored == 0 || replayed != 0) {
								t.Errorf("restored: %v snapshots taken, %v activations restored from one, %v replayed from the top; want some restored and none replayed", taken, restored, replayed)
							}
							if !snapshotted[fx.lang] && taken != 0 {
								t.Errorf("restored: %v snapshots taken of a %s module, which is not transformed", taken, fx.lang)
							}
						}
						mu.Lock()
						defer mu.Unlock()
						key := sc.name + "/" + fx.lang
						if got[key] == nil {
							got[key] = map[string]transcript{}
						}
						got[key][mode.name] = tr
					})
				}
			}
		}
	})
	if t.Failed() {
		return
	}
	if evictions == 0 {
		t.Fatal("the evicted mode evicted no pass: every run was handed over by a claim")
	}
	if pagesRead.Load() == 0 {
		t.Fatal("the paged mode read no journal page: every journal fit its claim's window")
	}
	for key, byMode := range got {
		for _, mode := range parkingModes[1:] {
			tr, ran := byMode[mode.name]
			if !ran {
				continue // the mode skipped (no wasm-opt: no snapshots); CI requires it
			}
			if !reflect.DeepEqual(tr, byMode["parked"]) {
				t.Errorf("%s: %s differs from parked\n  parked: %+v\n  %s: %+v", key, mode.name, byMode["parked"], mode.name, tr)
			}
		}
	}
}

// gathered reads a registry's series as series does a scrape.
func gathered(t testing.TB, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := make(map[string]*dto.MetricFamily, len(families))
	for _, f := range families {
		byName[f.GetName()] = f
	}
	return series(byName)
}

// TestAParkedRunIsNotReplayed: a run of five steps with a sleep after each but the last parks
// at every sleep and goes on from there when its timer fires (or a claim of its run comes
// first): four activations end parked,
// none suspended (a suspended one unwinds, and its run replays), and one finishes.
func TestAParkedRunIsNotReplayed(t *testing.T) {
	t.Parallel()
	for _, fx := range guestFixtures {
		t.Run(fx.lang, func(t *testing.T) {
			t.Parallel()
			reg := prometheus.NewRegistry()
			h := setup(t, harnessOptions{metrics: reg})
			h.deploy(fx.file, false)
			run := h.start("steps", map[string]any{"n": 5, "sleepMs": 20})
			if r := h.await(run.ID, settle); r.Status != store.StatusCompleted {
				t.Fatalf("run %s: %+v", r.Status, r.Error)
			}
			want := map[string]float64{
				"wfhost_activations_total{outcome=parked,tenant=default}":    4,
				"wfhost_activations_total{outcome=suspended,tenant=default}": 0,
				"wfhost_activations_total{outcome=finished,tenant=default}":  1,
				"wfhost_parked_passes{}":                                     0,
			}
			// The last activation is counted a moment after the run's end is committed.
			testenv.Await(t, settle, func() error {
				m := gathered(t, reg)
				for k, v := range want {
					if m[k] != v {
						return fmt.Errorf("%s = %v, want %v", k, m[k], v)
					}
				}
				// Each park is resumed by its timer, or by a claim of its run that came first
				// (the claimer's poll wakes at the store's next due time too): never replayed.
				if n := m["wfhost_park_resumes_total{by=timer}"] + m["wfhost_park_resumes_total{by=claim}"]; n != 4 {
					return fmt.Errorf("%v parks resumed by their timer or a claim, want 4", n)
				}
				return nil
			})
		})
	}
}

// TestParkingEvictsTheLeastRecentlyParked: with room for one parked AssemblyScript pass (it
// counts 256 KiB: 128 KiB of memory, the two pages the examples start with, half as much
// again, and 64 KiB), a second run that parks evicts the first, which is replayed when its
// sleep is over; both end with the same journal.
func TestParkingEvictsTheLeastRecentlyParked(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h := setup(t, harnessOptions{metrics: reg, parkMemory: 300 << 10})
	h.deploy("examples_as.wasm", false)
	// The first run sleeps long enough that the second parks while it is still parked, even
	// when a loaded machine (CI runs every package at once) delays the second's start by
	// seconds: at 1.5 s the first was sometimes resumed by its timer before the second parked.
	first := h.start("steps", map[string]any{"n": 2, "sleepMs": 5000})
	testenv.Await(t, settle, func() error {
		if n := gathered(t, reg)["wfhost_parked_passes{}"]; n != 1 {
			return fmt.Errorf("%v passes parked, want the first run's", n)
		}
		return nil
	})
	// Its sleep must still be ahead when its pass parks: a 200 ms sleep had sometimes passed by
	// then on a loaded CI machine, so the pass went on without parking (resumes 0).
	second := h.start("steps", map[string]any{"n": 2, "sleepMs": 1000})
	for _, run := range []store.Run{first, second} {
		if r := h.await(run.ID, settle); r.Status != store.StatusCompleted {
			t.Fatalf("run %s: %+v", r.Status, r.Error)
		}
		wantKeys(t, h.keys(run.ID), "s", "pause", "s#1")
	}
	m := gathered(t, reg)
	resumed := m["wfhost_park_resumes_total{by=timer}"] + m["wfhost_park_resumes_total{by=claim}"]
	if m["wfhost_park_evictions_total{reason=memory}"] != 1 || resumed != 1 {
		t.Fatalf("evictions for memory %v, resumes %v; want the first run evicted and the second resumed",
			m["wfhost_park_evictions_total{reason=memory}"], resumed)
	}
}

// TestStopWithParkedPasses: Stop evicts the passes parked at that moment, and the ones
// parking, resuming or refused meanwhile, and returns; no run is left leased.
func TestStopWithParkedPasses(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{noStart: true})
	h.deploy("examples.wasm", false)
	for round := range 3 {
		eng, err := engine.New(engine.Config{Store: h.store, Runtime: runtimeForTests(t), LeaseFor: 10 * time.Minute,
			PollInterval: 500 * time.Millisecond, ShutdownGrace: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		for range 30 {
			h.start("steps", map[string]any{"n": 12, "sleepMs": 500})
		}
		time.Sleep(500 * time.Millisecond)
		stopped := make(chan struct{})
		go func() { eng.Stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: Stop did not return within 20s", round)
		}
	}
}
