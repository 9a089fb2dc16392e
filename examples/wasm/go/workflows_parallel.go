package main

import (
	"encoding/json"
	"slices"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

// The parallel workflow (abi/ABI.md §4.18), the same in every guest language: n branches, each
// squaring its index in a step (or failing for good when its index is in fail), joined as
// asked; the parent sums the squares of the branches that completed.

type parallelInput struct {
	N    int    `json:"n"`
	Join string `json:"join"`
	Fail []int  `json:"fail"`
}

type squared struct {
	Sq int `json:"sq"`
}

type parallelResult struct {
	First    int      `json:"first"`
	Statuses []string `json:"statuses"`
	Sum      int      `json:"sum"`
}

func init() {
	wf.Register(wf.Workflow[parallelInput, parallelResult]{Name: "parallel", Version: "1", Run: parallelWorkflow})
}

func parallelWorkflow(ctx *wf.Context, in parallelInput) (parallelResult, error) {
	res, err := wf.Parallel(ctx, "fan", in.N, wf.ParallelOptions{Join: wf.Join(in.Join)}, func(ctx *wf.Context, i int) (any, error) {
		return wf.Step(ctx, "square", func(sc *wf.StepContext) (squared, error) {
			if slices.Contains(in.Fail, i) {
				return squared{}, wf.NonRetryable(wf.NewError("branch_boom", "branch %d fails", i))
			}
			return squared{Sq: i * i}, nil
		})
	})
	if err != nil {
		return parallelResult{}, err
	}
	out := parallelResult{First: res.First, Statuses: make([]string, len(res.Branches))}
	for i, b := range res.Branches {
		out.Statuses[i] = b.Status
	}
	sum, err := wf.Step(ctx, "sum", func(sc *wf.StepContext) (map[string]int, error) {
		total := 0
		for _, b := range res.Branches {
			if b.Status == "completed" {
				var s squared
				if err := json.Unmarshal(b.Output, &s); err != nil {
					return nil, err
				}
				total += s.Sq
			}
		}
		return map[string]int{"sum": total}, nil
	})
	if err != nil {
		return parallelResult{}, err
	}
	out.Sum = sum["sum"]
	return out, nil
}
