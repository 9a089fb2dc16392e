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
		var err error
		run, created, ok, err = s.flowStart(ctx, tx, n, startHow{})
		return err
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

// flowWorkflow resolves n's workflow as create_leased_run.sql does and returns n resolved, its
// flow (nil: none), the workflow's retention and the transaction's time; ok is false when the
// tenant has no such workflow.
func (s *Store) flowWorkflow(ctx context.Context, tx pgx.Tx, n store.NewRun) (_ store.NewRun, flowRaw []byte, wfRet int, now time.Time, ok bool, err error) {
	err = tx.QueryRow(ctx, s.q("flow_workflow"), n.TenantID, n.Workflow, n.Version).
		Scan(&n.Workflow, &n.Version, &n.Digest, &wfRet, &flowRaw, &now)
	if errors.Is(err, pgx.ErrNoRows) {
		return n, nil, 0, now, false, nil
	}
	return n, flowRaw, wfRet, now, err == nil, err
}

// flowStart creates n under its workflow's flow control in tx, as startHow allows: ok is
// false, with nothing written, when the workflow is unknown or has none. A debounced start
// answers the key's pending run, created false. errFlowKeyUsed: the idempotency key was taken
// meanwhile, and tx must be rolled back (flow keys were taken for a run never inserted).
func (s *Store) flowStart(ctx context.Context, tx pgx.Tx, n store.NewRun, how startHow) (run store.Run, created, ok bool, err error) {
	n, flowRaw, wfRet, now, found, err := s.flowWorkflow(ctx, tx, n)
	if err != nil || !found || flowRaw == nil {
		return store.Run{}, false, false, err
	}
	var flow abi.Flow
	if err := json.Unmarshal(flowRaw, &flow); err != nil {
		return store.Run{}, false, true, fmt.Errorf("decode the flow of workflow %s: %w", n.Workflow, err)
	}
	if how.noDebounce {
		flow.Debounce = nil
	}
	fs, err := store.FlowStartOf(flow, n)
	if err != nil {
		return store.Run{}, false, true, err
	}
	if n.IdempotencyKey != "" {
		r, err := scanRun(tx.QueryRow(ctx, s.q("get_run_by_key"), n.TenantID, n.Workflow, n.IdempotencyKey))
		if err == nil {
			return r, false, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return store.Run{}, false, true, err
		}
	}
	rows := pgFlowRows{ctx: ctx, tx: tx, q: s.q, tenant: n.TenantID, workflow: n.Workflow}
	if d := flow.Debounce; d != nil {
		row, err := rows.Lock("debounce", fs.Keys.Debounce, 0)
		if err != nil {
			return store.Run{}, false, true, err
		}
		if row.Pending != "" {
			r, err := scanRun(tx.QueryRow(ctx, s.q("flow_debounce"), n.TenantID, row.Pending, jsonOrNull(n.Input), d.PeriodMs))
			if err == nil {
				return r, false, true, nil
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return store.Run{}, false, true, err
			}
		}
	}
	adm, err := store.AdmitFlow(fs, now, rows)
	if err != nil {
		return store.Run{}, false, true, err
	}
	n.RetentionDays = store.RetentionDays(n.RetentionDays, wfRet, n.DefaultRetentionDays, n.MaxRetentionDays)
	if how.restart != nil {
		// A restart's run is made by its own statement, with the journal it keeps; the flow
		// then places it as create_flow_run.sql would have inserted it.
		if run, err = how.restart(tx, n); err != nil {
			return store.Run{}, false, true, err
		}
		if run, err = scanRun(tx.QueryRow(ctx, s.q("flow_place"), run.ID, adm.AvailableAt, adm.Held, adm.ConcurrencyKey, string(flowRaw), fs.Priority,
			adm.RateKey, adm.RateAt, adm.DebounceKey, s.wakeChannel)); err != nil {
			return store.Run{}, false, true, err
		}
	} else {
		run, err = scanRun(tx.QueryRow(ctx, s.q("create_flow_run"), n.TenantID, n.Workflow, n.Version, n.Digest,
			jsonOrNull(n.Input), n.IdempotencyKey, n.RetentionDays, s.wakeChannel, adm.AvailableAt, adm.Held, n.Deadline,
			retryArg(n.Retry), n.Attempt, adm.ConcurrencyKey, string(flowRaw), fs.Priority, adm.RateKey, adm.RateAt, adm.DebounceKey, store.TriggerArg(n.Trigger)))
		if errors.Is(err, pgx.ErrNoRows) {
			return store.Run{}, false, true, errFlowKeyUsed
		}
		if err != nil {
			return store.Run{}, false, true, err
		}
	}
	if flow.Debounce != nil {
		if err := rows.Take("debounce", fs.Keys.Debounce, false, nil, run.ID); err != nil {
			return store.Run{}, false, true, err
		}
	}
	return run, true, true, nil
}

// pgFlowRows are a flow start's key rows in flow_keys, locked in its transaction tx
// (store.FlowKeyRows).
type pgFlowRows struct {
	ctx              context.Context
	tx               pgx.Tx
	q                func(string) string
	tenant, workflow string
}

func (r pgFlowRows) Lock(kind, key string, limit int) (row store.FlowKeyRow, err error) {
	err = r.tx.QueryRow(r.ctx, r.q("flow_lock"), r.tenant, r.workflow, kind, key, limit).Scan(&row.Active, &row.Limit, &row.Starts, &row.Pending)
	return row, err
}

func (r pgFlowRows) Take(kind, key string, slot bool, starts []time.Time, pendingRun string) error {
	var startsArg, runArg any // NULL: unchanged (flow_take.sql)
	if starts != nil {
		startsArg = starts
	}
	if pendingRun != "" {
		runArg = pendingRun
	}
	_, err := r.tx.Exec(r.ctx, r.q("flow_take"), r.tenant, r.workflow, kind, key, slot, startsArg, runArg)
	return err
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
