package engine

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// maxGuestRecords bounds the log records one activation's guest may write (log calls and
// output lines, each already cut at 4 KiB by the host): a guest printing in a loop must not
// flood the daemon's log. The rest are counted and reported once when the activation ends.
const maxGuestRecords = 1000

// guestLogCap passes the first max records to its handler and counts the others. One
// activation uses it; the counters are atomic because slog allows handlers to be shared.
type guestLogCap struct {
	slog.Handler
	max     int64
	written *atomic.Int64
	dropped *atomic.Int64
}

func newGuestLogCap(h slog.Handler, max int64) guestLogCap {
	return guestLogCap{Handler: h, max: max, written: new(atomic.Int64), dropped: new(atomic.Int64)}
}

func (g guestLogCap) Handle(ctx context.Context, r slog.Record) error {
	if g.written.Add(1) > g.max {
		g.dropped.Add(1)
		return nil
	}
	return g.Handler.Handle(ctx, r)
}

func (g guestLogCap) WithAttrs(attrs []slog.Attr) slog.Handler {
	g.Handler = g.Handler.WithAttrs(attrs)
	return g
}

func (g guestLogCap) WithGroup(name string) slog.Handler {
	g.Handler = g.Handler.WithGroup(name)
	return g
}
