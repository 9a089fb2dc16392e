package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// sweeper deletes terminal runs past their retention and broadcast events past their window,
// and closes the children a parent's end left running. It is one of the Executor's loops, with
// no state of its own between sweeps, so any number of hosts may sweep one store at once. Safe
// for concurrent use.
type sweeper struct {
	store    store.Store
	log      *slog.Logger
	interval time.Duration // Config.SweepInterval
	window   time.Duration // Config.BroadcastWindow
	obs      *observer
	clock    clock.Clock
	svc      *Service // cancels orphaned children as a client's cancel would; set by New
}

func newSweeper(cfg Config, obs *observer) *sweeper {
	return &sweeper{store: cfg.Store, log: cfg.Logger, interval: cfg.SweepInterval, window: cfg.BroadcastWindow, obs: obs, clock: cfg.Clock}
}

// loop sweeps at once and then every interval, until ctx ends or drain is closed.
func (w *sweeper) loop(ctx context.Context, drain <-chan struct{}) {
	t := w.clock.NewTicker(w.interval)
	defer t.Stop()
	for {
		w.sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-drain:
			return
		case <-t.C():
		}
	}
}

// Sweep runs one sweep now, whether or not the Executor is started, and returns how many runs
// it deleted.
func (x *Executor) Sweep(ctx context.Context) int { return x.sweeper.sweep(ctx) }

// sweep deletes expired runs, then broadcast events past their window, a batch at a time until
// a batch comes back short, then closes orphaned children, and returns how many runs it
// deleted.
func (w *sweeper) sweep(ctx context.Context) int {
	runs := w.inBatches(ctx, "retention sweep", "deleted", w.obs.swept, func(ctx context.Context) (int, error) {
		return w.store.SweepExpired(ctx, sweepBatch)
	})
	before := w.clock.Now().Add(-w.window)
	w.inBatches(ctx, "broadcast pruning", "deleted", w.obs.pruned, func(ctx context.Context) (int, error) {
		return w.store.PruneBroadcasts(ctx, before, sweepBatch)
	})
	w.closeOrphans(ctx)
	return runs
}

// inBatches calls batch until one comes back short, counting what each did (deleted, or
// closed: done says which, for the log), and returns the total; a failure ends it and is
// logged (the next sweep tries again).
func (w *sweeper) inBatches(ctx context.Context, what, done string, counted func(n int), batch func(context.Context) (int, error)) int {
	total := 0
	for ctx.Err() == nil {
		n, err := batch(ctx)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Error(what+" failed", "err", err)
			}
			break
		}
		total += n
		counted(n)
		if n < sweepBatch {
			break
		}
	}
	if total > 0 {
		w.log.Info(what, done, total)
	}
	return total
}

const sweepBatch = 1000

// closeOrphans closes the children a parent's end left running (store.Store.OrphanedChildren):
// the end closes them only after it commits (closeAtEnd, ABI.md §4.16), and a host that died
// between the two left them. Each is closed as that end would have (Service.closeChild); a
// cancel asked takes it out of the next batch. A batch that closes fewer than it lists ends the
// sweep: what failed is logged, and the next sweep tries it again.
func (w *sweeper) closeOrphans(ctx context.Context) {
	w.inBatches(ctx, "orphaned children", "closed", func(int) {}, func(ctx context.Context) (int, error) {
		orphans, err := w.store.OrphanedChildren(ctx, sweepBatch)
		closed := 0
		for _, o := range orphans {
			if w.svc.closeChild(ctx, o.TenantID, o.ParentRunID, o.RunID, 0, false, DefaultCancelGrace) {
				closed++
			}
		}
		return closed, err
	})
}
