package main

import (
	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

// tickerInput is one turn of the ticker: the turn's number, how many turns there are, how many
// ticks each takes and the sum of every earlier turn's ticks.
type tickerInput struct {
	Turn  int `json:"turn"`
	Turns int `json:"turns"` // default 1
	Ticks int `json:"ticks"` // per turn; default 1
	Total int `json:"total"`
}

type tickerResult struct {
	Turns int `json:"turns"`
	Total int `json:"total"`
}

func init() {
	wf.Register(wf.Workflow[tickerInput, tickerResult]{Name: "ticker", Version: "1", Run: ticker})
}

// ticker is a loop that continues as new after every turn (abi/ABI.md §4.14): each run
// journals only its own turn's ticks, so the loop can run past any step cap.
func ticker(ctx *wf.Context, in tickerInput) (tickerResult, error) {
	ticks := max(in.Ticks, 1)
	total := in.Total
	for i := 1; i <= ticks; i++ {
		n, err := wf.Step(ctx, "tick", func(sc *wf.StepContext) (int, error) { return in.Turn*ticks + i, nil })
		if err != nil {
			return tickerResult{}, err
		}
		total += n
	}
	if in.Turn+1 >= max(in.Turns, 1) {
		return tickerResult{Turns: in.Turn + 1, Total: total}, nil
	}
	next := tickerInput{Turn: in.Turn + 1, Turns: in.Turns, Ticks: ticks, Total: total}
	return tickerResult{}, wf.ContinueAsNew(ctx, next)
}
