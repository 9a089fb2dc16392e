package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/wfhost/wfhost/store"
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

// runGuestLog gathers the lines of one activation's guest that the run's guest log keeps,
// for the run's end to write with it (journal.finish, store.Store.Finish), or, for a pass
// that does not end the run, for one statement of their own just before the write that lets
// the run go (journal.keepGuestLog): an activation whose guest logs nothing writes nothing. It keeps a
// record only when it is the guest's (attribute source=guest) and new: a line logged in a step
// callback (which runs only when the step executes), or outside steps once the pass has
// replayed its journal (live), since a replay runs the workflow's code from the top again and
// would log its lines again. Lines are already storable and redacted by the host (ABI.md
// §4.9), as step outputs are. Guarded by mu: slog lets a handler be shared.
type runGuestLog struct {
	mu    sync.Mutex
	live  func() bool
	now   func() time.Time
	lines []store.GuestLogLine
	bytes int
}

// guestLogLineBytes bounds one kept line: a host record is at most 4 KiB already, but a stack
// trace the host gathers from output lines is one record of many.
const guestLogLineBytes = 4 << 10

func (g *runGuestLog) Enabled(context.Context, slog.Level) bool { return true }

func (g *runGuestLog) Handle(_ context.Context, r slog.Record) error {
	var source, step, stream string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "source":
			source = a.Value.String()
		case "step":
			step = a.Value.String()
		case "stream":
			stream = a.Value.String()
		}
		return true
	})
	if source != "guest" || (step == "" && !g.live()) {
		return nil
	}
	msg := r.Message
	if len(msg) > guestLogLineBytes {
		cut := guestLogLineBytes
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut]
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	// The run's bound (store.MaxGuestLogBytes) bounds one activation's lines too: the store
	// would drop the rest.
	if len(g.lines) >= store.MaxGuestLogLines || g.bytes+len(msg) > store.MaxGuestLogBytes {
		return nil
	}
	g.bytes += len(msg)
	g.lines = append(g.lines, store.GuestLogLine{At: g.now().UTC().Truncate(time.Microsecond), Level: levelName(r.Level), Message: msg, Stream: stream, Step: step})
	return nil
}

// WithAttrs and WithGroup are not used on a guest's logger (the host passes its attributes
// with each record); a handler derived by them keeps the same lines.
func (g *runGuestLog) WithAttrs([]slog.Attr) slog.Handler { return g }
func (g *runGuestLog) WithGroup(string) slog.Handler      { return g }

// take returns the lines gathered and forgets them; none from a nil runGuestLog (a run that
// ends before its pass is made).
func (g *runGuestLog) take() []store.GuestLogLine {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.lines
	g.lines, g.bytes = nil, 0
	return out
}

func levelName(l slog.Level) string {
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	}
	return "error"
}

// teeHandler hands each record to both handlers: the daemon's log and the run's guest log.
type teeHandler struct{ a, b slog.Handler }

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return t.a.Enabled(ctx, l) || t.b.Enabled(ctx, l)
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if t.a.Enabled(ctx, r.Level) {
		err = t.a.Handle(ctx, r.Clone())
	}
	if t.b.Enabled(ctx, r.Level) {
		err = errors.Join(err, t.b.Handle(ctx, r))
	}
	return err
}

func (t teeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return teeHandler{t.a.WithAttrs(attrs), t.b.WithAttrs(attrs)}
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{t.a.WithGroup(name), t.b.WithGroup(name)}
}

// keepGuestLog writes lines to the run's guest log on their own: one statement, nothing when
// there are none. A failure loses the lines, not the run: it is logged and the activation goes
// on to its end.
func (x *Executor) keepGuestLog(ctx context.Context, log *slog.Logger, run store.Run, lines []store.GuestLogLine) {
	if len(lines) == 0 {
		return
	}
	kept, err := x.cfg.Store.AppendGuestLog(ctx, run.TenantID, run.ID, lines)
	if err != nil {
		log.Warn("guest log lines not kept", "lines", len(lines), "err", err)
		return
	}
	if kept < len(lines) {
		log.Debug("guest log lines past the run's bound dropped", "dropped", len(lines)-kept)
	}
}
