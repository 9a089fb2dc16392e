package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// Flow control (store/flow.go), as store/postgres does it, in Go: one writer holds the
// store, so a start and an end of one key never run at once and need no row lock. A run's
// end releases its concurrency slot in the transaction that ends it (flowEnded, called
// where childEnded is).

// setFlow stores a bound workflow's flow (nil: none).
func (w *wtx) setFlow(wf store.Workflow) error {
	var flow any
	if wf.Flow != nil {
		b, err := json.Marshal(wf.Flow)
		if err != nil {
			return err
		}
		flow = string(b)
	}
	_, err := w.exec("set_workflow_flow", wf.TenantID, wf.Name, wf.Version, flow)
	return err
}

// workflowFlow is the resolved workflow's flow, "" for none (or no such version).
func (w *wtx) workflowFlow(n store.NewRun) (string, error) {
	var flow sql.NullString
	err := w.queryRow("workflow_flow", n.TenantID, n.Workflow, n.Version).Scan(&flow)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return flow.String, err
}

// createFlowRun creates the resolved run n under its workflow's flow control flowRaw, as how
// allows (startRun): a client's start (createLeasedRun), a trigger's, a child's, a hook's, a
// restart's.
func (w *wtx) createFlowRun(n store.NewRun, flowRaw string, how startHow) (store.Claim, bool, error) {
	var flow abi.Flow
	if err := json.Unmarshal([]byte(flowRaw), &flow); err != nil {
		return store.Claim{}, false, fmt.Errorf("decode the flow of workflow %s: %w", n.Workflow, err)
	}
	if how.noDebounce {
		flow.Debounce = nil
	}
	fs, err := store.FlowStartOf(flow, n)
	if err != nil {
		return store.Claim{}, false, err
	}
	input, err := jsonOrNull(n.Input)
	if err != nil {
		return store.Claim{}, false, fmt.Errorf("input: %w", err)
	}
	if run, found, err := w.runByKey(n); found || err != nil {
		return store.Claim{Run: run}, false, err
	}
	rows := sqliteFlowRows{w: w, tenant: n.TenantID, workflow: n.Workflow}
	now := w.now
	if d := flow.Debounce; d != nil {
		row, err := rows.Lock("debounce", fs.Keys.Debounce, 0)
		if err != nil {
			return store.Claim{}, false, err
		}
		if row.Pending != "" {
			at := now.Add(time.Duration(d.PeriodMs) * time.Millisecond)
			run, err := scanRun(w.queryRow("flow_debounce", n.TenantID, row.Pending, input, micros(now), micros(at)))
			if err == nil {
				w.wake() // its timer moved
				return store.Claim{Run: run}, false, nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return store.Claim{}, false, err
			}
		}
	}
	adm, err := store.AdmitFlow(fs, now, rows)
	if err != nil {
		return store.Claim{}, false, err
	}
	var run store.Run
	if how.insert != nil {
		run, err = how.insert(n)
	} else {
		run, err = w.insertRun(n, true)
	}
	if err != nil {
		return store.Claim{}, false, err
	}
	var availArg any = micros(adm.AvailableAt)
	if adm.Held {
		availArg = nil
	}
	concKey, rateKey, debounceKey := strArg(adm.ConcurrencyKey), strArg(adm.RateKey), strArg(adm.DebounceKey)
	if run, err = scanRun(w.queryRow("flow_place", run.ID, concKey, availArg)); err != nil {
		return store.Claim{}, false, err
	}
	if _, err := w.exec("insert_run_flow", run.ID, n.TenantID, n.Workflow, flowRaw, fs.Priority, concKey, adm.Held,
		micros(adm.AvailableAt), rateKey, timeArg(adm.RateAt), debounceKey); err != nil {
		return store.Claim{}, false, err
	}
	if flow.Debounce != nil {
		if err := rows.Take("debounce", fs.Keys.Debounce, false, nil, run.ID); err != nil {
			return store.Claim{}, false, err
		}
	}
	return store.Claim{Run: run}, true, nil
}

// strArg is an optional string as a statement's argument: NULL for none.
func strArg(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// sqliteFlowRows are a flow start's key rows in flow_keys (store.FlowKeyRows). The writer
// holds the store for the start's transaction w, so reading a row is holding it.
type sqliteFlowRows struct {
	w                *wtx
	tenant, workflow string
}

func (r sqliteFlowRows) Lock(kind, key string, limit int) (row store.FlowKeyRow, err error) {
	var raw string
	if err = r.w.queryRow("flow_lock", r.tenant, r.workflow, kind, key, limit).Scan(&row.Active, &row.Limit, &raw, &row.Pending); err != nil {
		return row, err
	}
	var us []int64
	if err = json.Unmarshal([]byte(raw), &us); err != nil {
		return row, err
	}
	for _, u := range us {
		row.Starts = append(row.Starts, fromMicros(u))
	}
	return row, nil
}

func (r sqliteFlowRows) Take(kind, key string, slot bool, starts []time.Time, pendingRun string) error {
	var startsArg, runArg any // NULL: unchanged (flow_take.sql)
	if starts != nil {
		us := make([]int64, len(starts))
		for i, t := range starts {
			us[i] = micros(t)
		}
		b, _ := json.Marshal(us)
		startsArg = string(b)
	}
	if pendingRun != "" {
		runArg = pendingRun
	}
	_, err := r.w.exec("flow_take", r.tenant, r.workflow, kind, key, slot, startsArg, runArg)
	return err
}

// flowEnded is called in every transaction that ends run runID, after its end is written:
// a run that waited for a concurrency slot leaves the queue; one that held a slot passes it
// to its continuation, or to its key's next waiting run (made claimable now), or gives it
// back, as store/postgres's flow_released trigger does.
func (w *wtx) flowEnded(runID string) error {
	var (
		tenant, workflow, flowRaw, continuedAs string
		priority                               int
		concKey, rateKey, debounceKey          sql.NullString
		held                                   bool
		rateAt                                 sql.NullInt64
	)
	err := w.queryRow("flow_of_run", runID).Scan(&tenant, &workflow, &flowRaw, &priority, &concKey, &held, &rateKey, &rateAt, &debounceKey, &continuedAs)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !concKey.Valid {
		return nil
	}
	if err != nil {
		return err
	}
	if held {
		_, err := w.exec("flow_unheld", runID)
		return err
	}
	if continuedAs != "" {
		if _, err := w.exec("flow_inherit", continuedAs, concKey.String); err != nil {
			return err
		}
		_, err := w.exec("insert_run_flow", continuedAs, tenant, workflow, flowRaw, priority, concKey.String, false,
			micros(w.now), nullString(rateKey), nil, nullString(debounceKey))
		return err
	}
	var active, lim int
	if err := w.queryRow("flow_slots", tenant, workflow, concKey.String).Scan(&active, &lim); errors.Is(err, sql.ErrNoRows) {
		return nil
	} else if err != nil {
		return err
	}
	if active <= lim {
		var (
			next  string
			order int64
		)
		err := w.queryRow("flow_next_held", tenant, workflow, concKey.String).Scan(&next, &order)
		if err == nil {
			if _, err := w.exec("flow_unheld", next); err != nil {
				return err
			}
			if _, err := w.exec("flow_admit", next, order, micros(w.now)); err != nil {
				return err
			}
			w.wake()
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	if _, err := w.exec("flow_release", tenant, workflow, concKey.String); err != nil {
		return err
	}
	_, err = w.exec("flow_forget", tenant, workflow, concKey.String)
	return err
}

func nullString(s sql.NullString) any {
	if !s.Valid {
		return nil
	}
	return s.String
}

// RunFlow returns where the run stands under its workflow's flow control.
func (s *Store) RunFlow(ctx context.Context, tenantID, runID string) (_ store.RunFlow, _ bool, err error) {
	defer classify(&err)
	var (
		flowRaw                       string
		priority, active              int
		concKey, rateKey, debounceKey sql.NullString
		held                          bool
		rateAt                        sql.NullInt64
	)
	err = s.rdb.QueryRowContext(ctx, s.q("run_flow"), tenantID, runID).Scan(&flowRaw, &priority, &concKey, &held, &rateKey, &rateAt, &debounceKey, &active)
	if errors.Is(err, sql.ErrNoRows) {
		return store.RunFlow{}, false, nil
	}
	if err != nil {
		return store.RunFlow{}, false, fmt.Errorf("flow of run %s: %w", runID, err)
	}
	var flow abi.Flow
	if err := json.Unmarshal([]byte(flowRaw), &flow); err != nil {
		return store.RunFlow{}, false, fmt.Errorf("flow of run %s: %w", runID, err)
	}
	var at *time.Time
	if rateAt.Valid {
		t := fromMicros(rateAt.Int64)
		at = &t
	}
	return store.FlowOfRun(flow, priority, strPtr(concKey), held, active, strPtr(rateKey), at, strPtr(debounceKey)), true, nil
}

func strPtr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}
