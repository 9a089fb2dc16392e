package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/wfhost/wfhost/store"
)

// awaitPoll is how often AwaitRun reads a run it has heard nothing about: runs that end on
// another host, or are cancelled, send no local notice.
const awaitPoll = time.Second

// waiters are the callers of AwaitRun, by run id. A run that ends on this host wakes its
// waiters at once.
type waiters struct {
	mu sync.Mutex
	by map[string][]chan *store.Run
}

func (w *waiters) add(runID string) chan *store.Run {
	ch := make(chan *store.Run, 1)
	w.mu.Lock()
	if w.by == nil {
		w.by = make(map[string][]chan *store.Run)
	}
	w.by[runID] = append(w.by[runID], ch)
	w.mu.Unlock()
	return ch
}

func (w *waiters) remove(runID string, ch chan *store.Run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	list := w.by[runID]
	for i, c := range list {
		if c == ch {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(w.by, runID)
	} else {
		w.by[runID] = list
	}
}

// notify wakes the run's waiters; with ended, the run as this host just recorded its end,
// which they return without reading it back.
func (w *waiters) notify(runID string, ended *store.Run) {
	w.mu.Lock()
	list := w.by[runID]
	w.mu.Unlock()
	for _, ch := range list {
		select {
		case ch <- ended:
		default:
		}
	}
}

// AwaitRun waits until the run is terminal or nondeterministic (or ctx ends) and returns it.
// A run finished by this host is reported at once; otherwise the run is read every second.
func (s *Service) AwaitRun(ctx context.Context, tenantID, runID string) (store.Run, error) {
	ch := s.waiters.add(runID)
	defer s.waiters.remove(runID, ch)
	return s.awaitEnd(ctx, tenantID, runID, ch, 0)
}

// StartAndAwait starts a run and waits for its end (or for ctx), like StartRun then AwaitRun,
// without reading the run back: StartAndWait with no bound of its own.
func (s *Service) StartAndAwait(ctx context.Context, tenantID string, req StartRequest) (store.Run, error) {
	run, _, err := s.StartAndWait(ctx, tenantID, req, 0)
	return run, err
}

// StartAndWait starts a run and waits up to wait (0: until ctx ends) for its end. Its waiter
// is in place before this host can activate the run, so a run that ends here, however soon,
// is reported at once from what this host recorded, with no read of the store; a run that
// ends elsewhere is read every awaitPoll. After wait it returns the run as it then stands.
// A run started earlier with the same idempotency key (created is false) is awaited as
// AwaitRun does. When ctx ends first, the error comes with the run as it was started, so the
// caller still knows its id.
func (s *Service) StartAndWait(ctx context.Context, tenantID string, req StartRequest, wait time.Duration) (run store.Run, created bool, err error) {
	var ch chan *store.Run
	run, created, err = s.startRun(ctx, tenantID, req, func(r store.Run) { ch = s.waiters.add(r.ID) })
	if err != nil {
		return store.Run{}, false, err
	}
	first := awaitPoll // just created: nothing to read before the first poll
	if !created {
		if run.Status.Terminal() || run.Status == store.StatusNondeterministic {
			return run, false, nil
		}
		ch, first = s.waiters.add(run.ID), 0
	}
	defer s.waiters.remove(run.ID, ch)
	wctx := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	ended, err := s.awaitEnd(wctx, tenantID, run.ID, ch, first)
	switch {
	case err == nil:
		return ended, created, nil
	case wait > 0 && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		now, err := s.cfg.Store.GetRun(ctx, tenantID, run.ID)
		return now, created, err
	}
	return run, created, err
}

// awaitEnd waits for the run's end on ch (this host's notice) or by reading it, first after
// first and then every awaitPoll (runs that end on another host, or are cancelled, send no
// local notice).
func (s *Service) awaitEnd(ctx context.Context, tenantID, runID string, ch <-chan *store.Run, first time.Duration) (store.Run, error) {
	t := s.cfg.Clock.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return store.Run{}, ctx.Err()
		case ended := <-ch:
			if ended != nil {
				return *ended, nil
			}
		case <-t.C():
		}
		run, err := s.cfg.Store.GetRun(ctx, tenantID, runID)
		if err != nil {
			return store.Run{}, err
		}
		if run.Status.Terminal() || run.Status == store.StatusNondeterministic || run.Status == store.StatusPaused {
			return run, nil
		}
		t.Reset(awaitPoll)
	}
}
