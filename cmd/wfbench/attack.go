package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/internal/wasmgen"
	"github.com/wfhost/wfhost/store"
)

// attack is -mode=attack: the control tenant's latency (n runs of the steps workflow, one at a
// time) idle, then while an attacker tenant uploads every generated hostile module and runs
// every hostile workflow in a loop (internal/wasmgen, testdata/hostile.wasm), for at least n
// runs and one whole round of attacks. It prints both phases as RESULT lines and returns the
// latencies under attack for the usual one.
func (b *bench) attack(ctx context.Context, o options) ([]time.Duration, error) {
	idle, err := b.latency(ctx, o.n)
	if err != nil {
		return nil, err
	}
	if _, _, _, err := b.eng.CreateTenant(ctx, "attacker", store.Limits{MemoryPages: 256, ActivationTimeoutMs: 10_000, Concurrency: 2}); err != nil && !errors.Is(err, store.ErrConflict) {
		return nil, err
	}
	hostile, err := os.ReadFile(filepath.Join(o.testdata, "hostile.wasm"))
	if err != nil {
		return nil, err
	}
	var (
		tried, wrong, rounds atomic.Int64
		stop                 = make(chan struct{})
		stopped              sync.WaitGroup
		attacked             []time.Duration
	)
	kinds := map[string]bool{}
	for _, k := range strings.Split(o.attacks, ",") {
		kinds[k] = true
	}
	stopped.Go(func() { runAttacker(ctx, b.eng, hostile, kinds, stop, &tried, &wrong, &rounds) })
	// At least n control runs, and as many as it takes the attacker to go through every
	// attack once.
	for len(attacked) < o.n || rounds.Load() == 0 {
		took, err := b.one(ctx)
		if err != nil {
			close(stop)
			stopped.Wait()
			return nil, err
		}
		attacked = append(attacked, took)
	}
	close(stop)
	stopped.Wait()
	slices.Sort(idle)
	fmt.Printf("RESULT peer=wfhost lang=%s mode=attack phase=idle n=%d p50_ms=%.3f p99_ms=%.3f\n", o.lang, len(idle), ms(pct(idle, .5)), ms(pct(idle, .99)))
	sorted := slices.Sorted(slices.Values(attacked))
	fmt.Printf("RESULT peer=wfhost lang=%s mode=attack phase=attack n=%d p50_ms=%.3f p99_ms=%.3f attack_cases=%d attack_unexpected=%d p99_ratio=%.2f\n",
		o.lang, len(attacked), ms(pct(sorted, .5)), ms(pct(sorted, .99)), tried.Load(), wrong.Load(), float64(pct(sorted, .99))/float64(max(pct(idle, .99), 1)))
	return attacked, nil
}

// runAttacker loops over the attacks until stop is closed, counting each attack tried and each
// that did not end as it must.
// The kinds of attack (-attacks): bombs (decoder and compiler bombs and spec violations,
// refused by the pre-check), traps (modules whose exports trap, spin or misuse the ABI, loaded
// and run), fixture (testdata/hostile.wasm's workflows: a spin to the deadline, a memory bomb,
// ...), slow (a compile that would take minutes, abandoned by its uploader).
func runAttacker(ctx context.Context, eng *engine.Engine, hostile []byte, kinds map[string]bool, stop <-chan struct{}, tried, wrong, rounds *atomic.Int64) {
	const tenant = "attacker"
	if _, err := eng.Deploy(ctx, tenant, hostile, true); err != nil {
		wrong.Add(1)
	}
	var cases []wasmgen.Hostile
	if kinds["bombs"] {
		cases = append(cases, wasmgen.Bombs()...)
	}
	if kinds["traps"] {
		cases = append(cases, wasmgen.TrapsAndAbuse()...)
		cases = append(cases, wasmgen.Hostile{Name: "spin-in-run", Wasm: wasmgen.Spin(), Code: "deadline_exceeded"})
	}
	for round := 0; ; round++ {
		select {
		case <-stop:
			return
		default:
		}
		var fixtureRuns sync.WaitGroup
		for _, c := range testenv.HostileRuns {
			if !kinds["fixture"] {
				break
			}
			tried.Add(1)
			fixtureRuns.Go(func() {
				r, err := eng.StartAndAwait(ctx, tenant, engine.StartRequest{Workflow: c.Workflow})
				if err != nil || r.Error == nil || r.Error.Code != c.Code {
					wrong.Add(1)
				}
			})
		}
		for _, c := range cases {
			select {
			case <-stop:
				fixtureRuns.Wait()
				return
			default:
			}
			tried.Add(1)
			_, err := eng.Deploy(ctx, tenant, c.Wasm, true)
			if c.Refused != "" {
				if !errors.Is(err, engine.ErrInvalid) {
					wrong.Add(1)
				}
				continue
			}
			if err != nil {
				wrong.Add(1)
				continue
			}
			r, err := eng.StartAndAwait(ctx, tenant, engine.StartRequest{Workflow: "w"})
			if err != nil || r.Error == nil || r.Error.Code != c.Code {
				wrong.Add(1)
			}
		}
		if kinds["slow"] {
			// A compile that would take minutes, abandoned by its uploader after 3 s.
			tried.Add(1)
			slow, cancel := context.WithTimeout(ctx, 3*time.Second)
			if _, err := eng.Deploy(slow, tenant, wasmgen.SlowCompile(8000+round), false); err == nil || errors.Is(err, engine.ErrInvalid) {
				wrong.Add(1)
			}
			cancel()
		}
		fixtureRuns.Wait()
		rounds.Add(1)
	}
}
