package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// Flow control (store/flow.go). A start of a workflow with flow control is one transaction
// that locks the rows of its keys in flow_keys (debounce, rate, concurrency, in that order)
// and inserts the run with its run_flow row; a run's end releases its concurrency slot in the
// deferred trigger flow_released (024_flow_control.sql). Those row locks serialise every
// host's starts and ends of one key, so no two hosts can both take a key's last slot.

// errFlowKeyUsed rolls a flow start back when its idempotency key was taken meanwhile.
var errFlowKeyUsed = errors.New("idempotency key taken during the start")

// flowArg is a workflow's flow as bind_workflow.sql takes it.
func flowArg(f *abi.Flow) any {
	if f == nil {
		return nil
	}
	b, _ := json.Marshal(f)
	return string(b)
}

// createFlowRun is CreateLeasedRun for a workflow with flow control: ok is false when the
// workflow is unknown or has none (the caller goes on as for any start).
func (s *Store) createFlowRun(ctx context.Context, n store.NewRun) (run store.Run, created, ok bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var (
			flowRaw []byte
			now     time.Time
			wfRet   int
		)
		err := tx.QueryRow(ctx, s.q("flow_workflow"), n.TenantID, n.Workflow, n.Version).
			Scan(&n.Workflow, &n.Version, &n.Digest, &wfRet, &flowRaw, &now)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && flowRaw == nil {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		var flow abi.Flow
		if err := json.Unmarshal(flowRaw, &flow); err != nil {
			return fmt.Errorf("decode the flow of workflow %s: %w", n.Workflow, err)
		}
		fs, err := store.FlowStartOf(flow, n)
		if err != nil {
			return err
		}
		if n.IdempotencyKey != "" {
			r, err := scanRun(tx.QueryRow(ctx, s.q("get_run_by_key"), n.TenantID, n.Workflow, n.IdempotencyKey))
			if err == nil {
				run = r
				return nil
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		lock := func(kind, key string, limit int) (active, lim int, starts []time.Time, runID string, err error) {
			err = tx.QueryRow(ctx, s.q("flow_lock"), n.TenantID, n.Workflow, kind, key, limit).Scan(&active, &lim, &starts, &runID)
			return
		}
		take := func(kind, key string, slot bool, starts []time.Time, runID any) error {
			var startsArg any
			if starts != nil {
				startsArg = starts
			}
			_, err := tx.Exec(ctx, s.q("flow_take"), n.TenantID, n.Workflow, kind, key, slot, startsArg, runID)
			return err
		}
		if d := flow.Debounce; d != nil {
			_, _, _, pending, err := lock("debounce", fs.Keys.Debounce, 0)
			if err != nil {
				return err
			}
			if pending != "" {
				r, err := scanRun(tx.QueryRow(ctx, s.q("flow_debounce"), n.TenantID, pending, jsonOrNull(n.Input), d.PeriodMs))
				if err == nil {
					run = r
					return nil
				}
				if !errors.Is(err, pgx.ErrNoRows) {
					return err
				}
			}
		}
		avail := now.Add(-time.Duration(fs.Priority) * time.Second)
		var rateKey, debounceKey, concKey any
		var rateAt *time.Time
		if r := flow.Rate; r != nil {
			_, _, starts, _, err := lock("rate", fs.Keys.Rate, r.Limit)
			if err != nil {
				return err
			}
			slot, keep := store.RateSlot(starts, r.Limit, time.Duration(r.PeriodMs)*time.Millisecond, now)
			if err := take("rate", fs.Keys.Rate, false, keep, nil); err != nil {
				return err
			}
			if slot.After(now) && slot.After(avail) {
				avail = slot
			}
			rateKey, rateAt = fs.Keys.Rate, &slot
		}
		if d := flow.Debounce; d != nil {
			if at := now.Add(time.Duration(d.PeriodMs) * time.Millisecond); at.After(avail) {
				avail = at
			}
			debounceKey = fs.Keys.Debounce
		}
		held := false
		if c := flow.Concurrency; c != nil {
			active, lim, _, _, err := lock("concurrency", fs.Keys.Concurrency, c.Limit)
			if err != nil {
				return err
			}
			held = active >= lim
			if err := take("concurrency", fs.Keys.Concurrency, !held, nil, nil); err != nil {
				return err
			}
			concKey = fs.Keys.Concurrency
		}
		n.RetentionDays = store.RetentionDays(n.RetentionDays, wfRet, n.DefaultRetentionDays, n.MaxRetentionDays)
		r, err := scanRun(tx.QueryRow(ctx, s.q("create_flow_run"), n.TenantID, n.Workflow, n.Version, n.Digest,
			jsonOrNull(n.Input), n.IdempotencyKey, n.RetentionDays, s.wakeChannel, avail, held, n.Deadline,
			retryArg(n.Retry), n.Attempt, concKey, string(flowRaw), fs.Priority, rateKey, rateAt, debounceKey))
		if errors.Is(err, pgx.ErrNoRows) {
			return errFlowKeyUsed
		}
		if err != nil {
			return err
		}
		if flow.Debounce != nil {
			if err := take("debounce", fs.Keys.Debounce, false, nil, r.ID); err != nil {
				return err
			}
		}
		run, created = r, true
		return nil
	})
	if errors.Is(err, errFlowKeyUsed) {
		run, err = s.existingRun(ctx, n, pgx.ErrNoRows)
		return run, false, true, err
	}
	if err != nil {
		return store.Run{}, false, true, fmt.Errorf("start %s under its flow control: %w", n.Workflow, err)
	}
	return run, created, ok, nil
}

// RunFlow returns where the run stands under its workflow's flow control.
func (s *Store) RunFlow(ctx context.Context, tenantID, runID string) (_ store.RunFlow, _ bool, err error) {
	defer classify(&err)
	if !validUUID(runID) {
		return store.RunFlow{}, false, nil
	}
	var (
		flowRaw                       []byte
		f                             store.RunFlow
		concKey, rateKey, debounceKey *string
		held                          bool
		rateAt                        *time.Time
		active                        int
	)
	err = s.pool.QueryRow(ctx, s.q("run_flow"), tenantID, runID).Scan(&flowRaw, &f.Priority, &concKey, &held, &rateKey, &rateAt, &debounceKey, &active)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.RunFlow{}, false, nil
	}
	if err != nil {
		return store.RunFlow{}, false, fmt.Errorf("flow of run %s: %w", runID, err)
	}
	var flow abi.Flow
	if err := json.Unmarshal(flowRaw, &flow); err != nil {
		return store.RunFlow{}, false, fmt.Errorf("flow of run %s: %w", runID, err)
	}
	return store.FlowOfRun(flow, f.Priority, concKey, held, active, rateKey, rateAt, debounceKey), true, nil
}
