package main

import (
	"encoding/json"
	"strings"
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

func main() {}

// rawStepRun calls the host directly, bypassing the SDK, to hand it a bad pointer.
//
//go:wasmimport wfhost step_run
func rawStepRun(namePtr, nameLen, optsPtr, optsLen uint32) uint64

type none struct{}

// sink keeps allocations reachable so the collector cannot free them.
var sink [][]byte

func init() {
	wf.Register(wf.Workflow[json.RawMessage, json.RawMessage]{Name: "echo", Version: "1",
		Run: func(ctx *wf.Context, in json.RawMessage) (json.RawMessage, error) { return in, nil }})

	// spin never returns: only the activation's deadline stops it.
	wf.Register(wf.Workflow[none, none]{Name: "spin", Version: "1",
		Run: func(ctx *wf.Context, _ none) (none, error) {
			for {
			}
		}})

	// spin-step never returns from a step callback: cancelling the run must stop it.
	wf.Register(wf.Workflow[none, none]{Name: "spin-step", Version: "1",
		Run: func(ctx *wf.Context, _ none) (none, error) {
			_, err := wf.Step(ctx, "forever", func(sc *wf.StepContext) (int, error) {
				wf.Log(ctx, "spinning in step forever") // tests wait for it: the callback runs
				for {
				}
			})
			return none{}, err
		}})

	// membomb allocates until the instance's memory limit stops it.
	wf.Register(wf.Workflow[none, none]{Name: "membomb", Version: "1",
		Run: func(ctx *wf.Context, _ none) (none, error) {
			for {
				sink = append(sink, make([]byte, 1<<20))
			}
		}})

	// trap blocks forever with nothing else to run: the Go runtime reports a deadlock, a fatal
	// error no recover can catch, and the guest traps.
	wf.Register(wf.Workflow[none, none]{Name: "trap", Version: "1",
		Run: func(ctx *wf.Context, _ none) (none, error) {
			select {}
		}})

	// oob hands step_run a name pointer far outside its memory.
	wf.Register(wf.Workflow[none, none]{Name: "oob", Version: "1",
		Run: func(ctx *wf.Context, _ none) (none, error) {
			rawStepRun(0xfffff000, 64, 0, 0)
			return none{}, nil
		}})

	// bigoutput returns 2 MiB, over the default 1 MiB output limit.
	wf.Register(wf.Workflow[none, string]{Name: "bigoutput", Version: "1",
		Run: func(ctx *wf.Context, _ none) (string, error) { return strings.Repeat("x", 2<<20), nil }})

	// bigstep's step returns 2 MiB, over the step output limit; the workflow returns the error.
	wf.Register(wf.Workflow[none, string]{Name: "bigstep", Version: "1",
		Run: func(ctx *wf.Context, _ none) (string, error) {
			return wf.Step(ctx, "huge", func(sc *wf.StepContext) (string, error) {
				return strings.Repeat("y", 2<<20), nil
			})
		}})
}

type slowInput struct {
	Ms int `json:"ms"`
}

func init() {
	// slow-step holds one step callback for input.ms milliseconds of real sleep, longer than
	// a lease, so the engine's heartbeat must keep the run.
	wf.Register(wf.Workflow[slowInput, int]{Name: "slow-step", Version: "1",
		Run: func(ctx *wf.Context, in slowInput) (int, error) {
			return wf.Step(ctx, "slow", func(sc *wf.StepContext) (int, error) {
				wf.Log(ctx, "slow step ran attempt=%d", sc.Attempt)
				time.Sleep(time.Duration(in.Ms) * time.Millisecond)
				return in.Ms, nil
			})
		}})
}
