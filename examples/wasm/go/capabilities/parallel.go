package main

import (
	"fmt"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

type parallelFetchInput struct {
	N             int    `json:"n"`
	URL           string `json:"url"`
	MaxConcurrent int    `json:"maxConcurrent"`
}

type parallelFetched struct {
	Statuses []int `json:"statuses"`
}

func init() {
	// parallel-fetch fans out n branches (abi/ABI.md §4.18), each making one GET of url with
	// its index in the query inside a step, and returns their HTTP statuses in branch order:
	// the engine's tests of branches that really run at once, and their benchmark.
	wf.Register(wf.Workflow[parallelFetchInput, parallelFetched]{Name: "parallel-fetch", Version: "1",
		Run: func(ctx *wf.Context, in parallelFetchInput) (parallelFetched, error) {
			res, err := wf.Parallel(ctx, "fetch-all", in.N, wf.ParallelOptions{MaxConcurrent: in.MaxConcurrent}, func(ctx *wf.Context, i int) (any, error) {
				return wf.Step(ctx, "fetch", func(sc *wf.StepContext) (int, error) {
					resp, err := sc.Do(wf.HTTPRequest{Method: "GET", URL: fmt.Sprintf("%s?branch=%d", in.URL, i)})
					if err != nil {
						return 0, err
					}
					if resp.Status != 200 {
						return 0, wf.NonRetryable(wf.NewError("fetch_status", "branch %d: status %d", i, resp.Status))
					}
					return resp.Status, nil
				}, wf.WithRetry(wf.RetryPolicy{Attempts: 1}))
			})
			if err != nil {
				return parallelFetched{}, err
			}
			out := parallelFetched{}
			for _, b := range res.Branches {
				var status int
				if _, err := fmt.Sscan(string(b.Output), &status); err != nil {
					return parallelFetched{}, fmt.Errorf("branch output %s: %w", b.Output, err)
				}
				out.Statuses = append(out.Statuses, status)
			}
			return out, nil
		}})
}
