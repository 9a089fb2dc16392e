package lifecycle_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wfhost/wfhost/internal/lifecycle"
)

// TestStartStopConcurrently starts and stops many Groups from many goroutines at once, each
// Group from several: every loop a Start launched has returned when any Stop returns, no loop
// starts after a Stop, and a Group starts at most once. Real concurrency is the point, so the
// goroutines race for real; the race detector checks the rest.
func TestStartStopConcurrently(t *testing.T) {
	t.Parallel()
	for range 200 {
		var g lifecycle.Group
		var live, starts atomic.Int64
		loop := func(ctx context.Context) {
			live.Add(1)
			defer live.Add(-1)
			<-ctx.Done()
		}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					if err := g.Start(context.Background(), loop, loop); err == nil {
						starts.Add(1)
					} else if !errors.Is(err, lifecycle.ErrStarted) && !errors.Is(err, lifecycle.ErrStopped) {
						t.Errorf("start: %v", err)
					}
					return
				}
				g.Stop(nil)
				if n := live.Load(); n != 0 {
					t.Errorf("%d loops still running after Stop returned", n)
				}
			}()
		}
		wg.Wait()
		g.Stop(nil)
		if n := starts.Load(); n > 1 {
			t.Fatalf("started %d times", n)
		}
		if n := live.Load(); n != 0 {
			t.Fatalf("%d loops still running after Stop", n)
		}
		if err := g.Start(context.Background(), loop); !errors.Is(err, lifecycle.ErrStopped) {
			t.Fatalf("start after stop: %v, want ErrStopped", err)
		}
	}
}

// TestStopOrder: Draining is closed before drain runs, and the loops' context is cancelled only
// after it, so a drain can wait for work the loops are still serving.
func TestStopOrder(t *testing.T) {
	t.Parallel()
	var g lifecycle.Group
	ctxSeen := make(chan context.Context, 1)
	if err := g.Start(context.Background(), func(ctx context.Context) { ctxSeen <- ctx; <-ctx.Done() }); err != nil {
		t.Fatal(err)
	}
	loopCtx := <-ctxSeen
	g.Stop(func() {
		select {
		case <-g.Draining():
		default:
			t.Error("Draining not closed when drain runs")
		}
		if loopCtx.Err() != nil {
			t.Error("the loops' context was cancelled before drain")
		}
		if g.IfRunning(func(context.Context) {}) {
			t.Error("IfRunning ran during Stop")
		}
	})
	if !errors.Is(context.Cause(loopCtx), lifecycle.ErrStopping) {
		t.Fatalf("cause %v, want ErrStopping", context.Cause(loopCtx))
	}
}

// TestStopBeforeStart: a Group stopped before it started never starts.
func TestStopBeforeStart(t *testing.T) {
	t.Parallel()
	var g lifecycle.Group
	g.Stop(nil)
	g.Stop(nil)
	if err := g.Start(context.Background()); !errors.Is(err, lifecycle.ErrStopped) {
		t.Fatalf("start after stop: %v, want ErrStopped", err)
	}
	if g.IfRunning(func(context.Context) {}) {
		t.Fatal("IfRunning ran on a stopped Group")
	}
}
