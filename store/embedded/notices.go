package embedded

import (
	"context"
	"fmt"
	"sync"

	"github.com/wfhost/wfhost/store"
)

// The embedded store serves one process, so notices need no database: the writer publishes
// them to every Listen call after the commit that caused them.

// hub fans notices out to listeners. Publishing never blocks the writer: each listener has
// an unbounded queue in which consecutive wake notices collapse into one (one look for work
// covers them all); cancel notices are each kept, since each names a run to stop.
type hub struct {
	mu        sync.Mutex
	listeners map[*listener]struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

type listener struct {
	mu    sync.Mutex
	queue []store.Notice
	ready chan struct{} // one token: the queue may be non-empty
}

func newHub() *hub {
	return &hub{listeners: map[*listener]struct{}{}, closed: make(chan struct{})}
}

func (h *hub) publish(n store.Notice) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for l := range h.listeners {
		l.push(n)
	}
}

func (h *hub) close() { h.closeOnce.Do(func() { close(h.closed) }) }

func (l *listener) push(n store.Notice) {
	l.mu.Lock()
	if k := len(l.queue); n.Kind == store.NoticeWake && k > 0 && l.queue[k-1].Kind == store.NoticeWake {
		l.queue[k-1].Self = l.queue[k-1].Self && n.Self
	} else {
		l.queue = append(l.queue, n)
	}
	l.mu.Unlock()
	select {
	case l.ready <- struct{}{}:
	default:
	}
}

func (l *listener) pop() (store.Notice, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.queue) == 0 {
		return store.Notice{}, false
	}
	n := l.queue[0]
	l.queue = l.queue[1:]
	return n, true
}

// Listen delivers notices until ctx ends (it then returns nil) or the store closes. Its first
// notice is a wake: nothing written before it listened reached it.
func (s *Store) Listen(ctx context.Context, notices chan<- store.Notice) error {
	l := &listener{ready: make(chan struct{}, 1)}
	s.hub.mu.Lock()
	s.hub.listeners[l] = struct{}{}
	s.hub.mu.Unlock()
	defer func() {
		s.hub.mu.Lock()
		delete(s.hub.listeners, l)
		s.hub.mu.Unlock()
	}()
	l.push(store.Notice{Kind: store.NoticeWake})
	for {
		if n, ok := l.pop(); ok {
			select {
			case notices <- n:
				continue
			case <-ctx.Done():
				return nil
			case <-s.hub.closed:
				return fmt.Errorf("listen: %w", errClosed)
			}
		}
		select {
		case <-l.ready:
		case <-ctx.Done():
			return nil
		case <-s.hub.closed:
			return fmt.Errorf("listen: %w", errClosed)
		}
	}
}
