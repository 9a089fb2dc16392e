package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// sweeper deletes terminal runs past their retention and broadcast events past their window.
// It is one of the Executor's loops, with no state of its own between sweeps, so any number of
// hosts may sweep one store at once. Safe for concurrent use.
type sweeper struct {
	store    store.Store
	log      *slog.Logger
	interval time.Duration // Config.SweepInterval
	window   time.Duration // Config.BroadcastWindow
	obs      *observer
	clock    clock.Clock
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
// a batch comes back short, and returns how many runs it deleted.
func (w *sweeper) sweep(ctx context.Context) int {
	runs := w.inBatches(ctx, "retention sweep", w.obs.swept, func(ctx context.Context) (int, error) {
		return w.store.SweepExpired(ctx, sweepBatch)
	})
	before := w.clock.Now().Add(-w.window)
	w.inBatches(ctx, "broadcast pruning", w.obs.pruned, func(ctx context.Context) (int, error) {
		return w.store.PruneBroadcasts(ctx, before, sweepBatch)
	})
	return runs
}

// inBatches calls deleteBatch until a batch comes back short, counting what it deleted, and
// returns the total; a failure ends it and is logged (the next sweep tries again).
func (w *sweeper) inBatches(ctx context.Context, what string, deleted func(n int), deleteBatch func(context.Context) (int, error)) int {
	total := 0
	for ctx.Err() == nil {
		n, err := deleteBatch(ctx)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Error(what+" failed", "err", err)
			}
			break
		}
		total += n
		deleted(n)
		if n < sweepBatch {
			break
		}
	}
	if total > 0 {
		w.log.Info(what, "deleted", total)
	}
	return total
}

const sweepBatch = 1000
