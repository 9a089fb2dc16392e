// Command goroutines is a standard Go workflow module for host/snapshot's opt-in Go test
// (TestResumeGoGuests): a workflow whose state lives partly in other goroutines, blocked on
// channels across every suspension, and in a map and the garbage collector's heap, so that an
// image has to carry the Go scheduler's and collector's state to resume it.
package main

import (
	"runtime"
	"time"

	wf "github.com/wfhost/wfhost/guest-sdk/go"
)

type input struct {
	N int `json:"n"`
}

type result struct {
	Sum     int `json:"sum"`
	Squares int `json:"squares"`
	Keys    int `json:"keys"`
}

func init() {
	wf.Register(wf.Workflow[input, result]{Name: "goroutines", Version: "1", Run: run})
}

// run sends each step's value to two workers over channels and sleeps after every step, so the
// workers are parked on their channels whenever the run suspends.
func run(ctx *wf.Context, in input) (result, error) {
	values := make(chan int)
	squares := make(chan int, 4)
	done := make(chan int)
	go func() { // sums what it is sent
		sum := 0
		for v := range values {
			sum += v
			squares <- v * v
		}
		close(squares)
		done <- sum
	}()
	total := make(chan int)
	go func() { // sums the squares
		s := 0
		for v := range squares {
			s += v
		}
		total <- s
	}()
	seen := map[string][]byte{}
	for i := range in.N {
		v, err := wf.Step(ctx, "s", func(sc *wf.StepContext) (int, error) { return i + 1, nil })
		if err != nil {
			return result{}, err
		}
		values <- v
		seen[time.Duration(v).String()] = make([]byte, 1<<10) // garbage for the collector
		if i%3 == 0 {
			runtime.GC()
		}
		if i < in.N-1 {
			wf.Sleep(ctx, "pause", time.Second)
		}
	}
	close(values)
	sum := <-done
	return result{Sum: sum, Squares: <-total, Keys: len(seen)}, nil
}

func main() {}
