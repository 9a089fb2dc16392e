package lifecycle

import (
	"context"
	"errors"
	"sync"
)

// ErrStarted is Start's answer on a Group that was started before.
var ErrStarted = errors.New("already started")

// ErrStopped is Start's answer on a Group that was stopped (before or after a start): a
// stopped Group stays stopped, so a Stop that races a Start can never leave loops running.
var ErrStopped = errors.New("already stopped")

// ErrStopping is the cancel cause of the loops' context when Stop ends them.
var ErrStopping = errors.New("stopping")

// Loop is one background loop: it runs until ctx is done.
type Loop func(ctx context.Context)

type state int

const (
	idle state = iota
	running
	stopping
	stopped
)

// Group runs loops from Start until Stop. The zero value is ready to use. Safe for concurrent
// use.
type Group struct {
	mu       sync.Mutex
	state    state
	ctx      context.Context
	cancel   context.CancelCauseFunc
	loops    sync.WaitGroup
	draining chan struct{} // closed when Stop begins
	done     chan struct{} // closed when Stop has returned for the first caller
}

func (g *Group) init() {
	if g.draining == nil {
		g.draining = make(chan struct{})
		g.done = make(chan struct{})
	}
}

// Start launches the loops under a context that keeps ctx's values but not its cancellation:
// they run until Stop, whatever becomes of ctx, so a shutdown always goes through Stop's
// order. It returns ErrStarted or ErrStopped, and starts nothing, on a Group that was
// started or stopped before.
func (g *Group) Start(ctx context.Context, loops ...Loop) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.init()
	switch g.state {
	case running, stopping:
		return ErrStarted
	case stopped:
		return ErrStopped
	}
	g.state = running
	g.ctx, g.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	for _, loop := range loops {
		g.loops.Add(1)
		go func() {
			defer g.loops.Done()
			loop(g.ctx)
		}()
	}
	return nil
}

// Stop stops the Group: it closes Draining, calls drain (which may wait for work the loops
// started to finish; nil for none), cancels the loops' context and waits for every loop. A
// Group never started is only marked stopped. Stop may be called any number of times from any
// goroutine; every call returns once the first has finished.
func (g *Group) Stop(drain func()) {
	g.mu.Lock()
	g.init()
	switch g.state {
	case idle:
		g.state = stopped
		close(g.draining)
		close(g.done)
		g.mu.Unlock()
		return
	case stopping, stopped:
		g.mu.Unlock()
		<-g.done
		return
	}
	g.state = stopping
	close(g.draining)
	g.mu.Unlock()

	if drain != nil {
		drain()
	}
	g.cancel(ErrStopping)
	g.loops.Wait()

	g.mu.Lock()
	g.state = stopped
	g.mu.Unlock()
	close(g.done)
}

// Cancel cancels the loops' context with cause before Stop would (a drain that gave up
// waiting); it does nothing on a Group not running.
func (g *Group) Cancel(cause error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cancel != nil {
		g.cancel(cause)
	}
}

// Draining is closed once Stop has begun (or the Group was stopped without a start): loops
// take no new work after it.
func (g *Group) Draining() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.init()
	return g.draining
}

// IfRunning calls f with the loops' context, under the lock Stop takes to begin, when the
// Group is running and not stopping, and reports whether it did. Work f counts (a worker added
// to a WaitGroup that Stop's drain waits on) is therefore counted before Stop begins or not at
// all.
func (g *Group) IfRunning(f func(ctx context.Context)) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != running {
		return false
	}
	f(g.ctx)
	return true
}
