package host

import (
	"context"
	"sync"
	"time"
)

// shared is work that several callers wait for and none of them owns: a load of a digest, a
// compile for a memory limit. It runs under a context of the Runtime's (see start), so no
// caller's cancellation or deadline reaches it; each caller waits on its own context, and the
// work is cancelled when the last caller waiting for it leaves. done is closed when the work
// has ended (its result is then set, in the struct that embeds shared).
type shared struct {
	done    chan struct{}
	cancel  context.CancelFunc
	waiters int // guarded by the mutex passed to join and wait
}

// newShared makes the work's context, from the Runtime's lifetime, with an overall timeout.
func newShared(life context.Context, timeout time.Duration) (shared, context.Context) {
	ctx, cancel := context.WithTimeout(life, timeout)
	return shared{done: make(chan struct{}), cancel: cancel}, ctx
}

// join counts one more caller waiting; mu must be held.
func (s *shared) join() { s.waiters++ }

// wait waits for the work or for ctx. A caller that leaves early un-counts itself under mu;
// when it was the last, the work is cancelled and abandon (called under mu) unlists it, so the
// next caller starts afresh rather than joining work that is being stopped.
func (s *shared) wait(ctx context.Context, mu *sync.Mutex, abandon func()) error {
	select {
	case <-s.done:
		mu.Lock()
		s.waiters--
		mu.Unlock()
		return nil
	case <-ctx.Done():
		mu.Lock()
		select {
		case <-s.done: // ended meanwhile: nothing to stop
			s.waiters--
			mu.Unlock()
			return nil
		default:
		}
		if s.waiters--; s.waiters == 0 {
			s.cancel()
			abandon()
		}
		mu.Unlock()
		return context.Cause(ctx)
	}
}

// finish ends the work: its context is released and the waiters are woken.
func (s *shared) finish() {
	s.cancel()
	close(s.done)
}
