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

// Completion hooks (store.HookStore). Where store/postgres writes an ended run's hooks in a
// deferred trigger, this store does it in Go in every transaction that ends a run (ended),
// after the run's end is written. A run pays for them only when the database holds a hook at
// all (anyHooks, kept in memory: one process owns the store) and then one primary-key read of
// the run's hooked flag, which its insert read from its workflow's gate (021_run_gate.sql), or
// PutHook set when it named the run while it was open.

// ended is called in every transaction that ends run runID (terminal): its flow control slot
// is passed on (flowEnded), an awaited child's parent step is resolved (childEnded, only for a
// run the finish said is a child: runs.is_child) and the run's hooks are written (hooksEnded).
func (w *wtx) ended(runID string, child bool) error {
	if err := w.flowEnded(runID); err != nil {
		return err
	}
	if child {
		if err := w.childEnded(runID); err != nil {
			return err
		}
	}
	return w.hooksEnded(runID)
}

// hooksEnded writes the hooks of the ended run runID, when it was created hooked: a start
// hook's run is created now (keyed by the ended run and the hook, so once), or the hook is
// recorded failed; a webhook is left pending for the dispatcher.
func (w *wtx) hooksEnded(runID string) error {
	if !w.s.anyHooks.Load() {
		return nil
	}
	var (
		hooked                            bool
		tenant, workflow, version, status string
		continuedAs                       string
		output, errInfo                   sql.NullString
		completedAt                       sql.NullInt64
		retention                         int
	)
	if err := w.queryRow("run_hooked", runID).Scan(&hooked, &tenant, &workflow, &version, &status, &output, &errInfo,
		&completedAt, &retention, &continuedAs); err != nil {
		return err
	}
	st := store.RunStatus(status)
	if !hooked || continuedAs != "" || (st != store.StatusCompleted && st != store.StatusFailed && st != store.StatusCancelled) {
		return nil
	}
	type hookRow struct {
		id, statuses, startWorkflow, startVersion, url string
	}
	rows, err := w.query("hooks_of_run", tenant, workflow, version)
	if err != nil {
		return err
	}
	var hooks []hookRow
	for rows.Next() {
		var h hookRow
		if err := rows.Scan(&h.id, &h.statuses, &h.startWorkflow, &h.startVersion, &h.url); err != nil {
			rows.Close()
			return err
		}
		hooks = append(hooks, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var depth int
	if err := w.queryRow("run_hook_depth", runID).Scan(&depth); err != nil {
		return err
	}
	depth++
	body := map[string]any{"runId": runID, "workflow": workflow, "version": version, "status": status,
		"output": rawOrNull(output), "error": rawOrNull(errInfo), "endedAt": nil}
	if completedAt.Valid {
		body["endedAt"] = fromMicros(completedAt.Int64)
	}
	payload, _ := json.Marshal(body)
	now := micros(w.now)
	for _, h := range hooks {
		var when []store.RunStatus
		if err := json.Unmarshal([]byte(h.statuses), &when); err != nil {
			return fmt.Errorf("hook %s: statuses: %w", h.id, err)
		}
		if !hasStatus(when, st) {
			continue
		}
		insert := func(kind, target string, p []byte, status string, attempts int, lastErr string, started string, next any) error {
			_, err := w.exec("insert_delivery", newUUID(), tenant, runID, h.id, kind, target, string(p), depth, status,
				attempts, nullIfEmpty(lastErr), nullIfEmpty(started), next, now)
			return err
		}
		if h.url != "" {
			body["hook"] = h.id
			p, _ := json.Marshal(body)
			delete(body, "hook")
			if err := insert(store.HookKindWebhook, h.url, p, store.DeliveryPending, 0, "", "", now); err != nil {
				return err
			}
			continue
		}
		if depth > store.MaxHookChainDepth {
			msg := fmt.Sprintf("hook_chain_too_deep: the run ended at the end of a chain of %d hook starts; no run was started", store.MaxHookChainDepth)
			if err := insert(store.HookKindStart, h.startWorkflow, payload, store.DeliveryFailed, 1, msg, "", nil); err != nil {
				return err
			}
			continue
		}
		var (
			name, ver, digest string
			wfRetention       int
		)
		err := w.queryRow("latest_workflow", tenant, h.startWorkflow, h.startVersion).Scan(&name, &ver, &digest, &wfRetention)
		if errors.Is(err, sql.ErrNoRows) {
			msg := "workflow_not_found: the tenant has no workflow " + h.startWorkflow
			if h.startVersion != "" {
				msg += " version " + h.startVersion
			}
			if err := insert(store.HookKindStart, h.startWorkflow, payload, store.DeliveryFailed, 1, msg, "", nil); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if wfRetention == 0 {
			wfRetention = retention
		}
		// Under the started workflow's flow control, as a trigger's start (startRun): this
		// store's Go start path is in this very transaction, so the start stays in it.
		run, _, err := w.startRun(store.NewRun{TenantID: tenant, Workflow: name, Version: ver, Digest: digest,
			Input: payload, IdempotencyKey: "hook:" + runID + ":" + h.id, RetentionDays: wfRetention, Attempt: 1}, startHow{})
		if errors.Is(err, abi.ErrFlowKey) {
			if err := insert(store.HookKindStart, h.startWorkflow, payload, store.DeliveryFailed, 1, "flow_key: "+err.Error(), "", nil); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if err := insert(store.HookKindStart, h.startWorkflow, payload, store.DeliveryDelivered, 1, "", run.ID, nil); err != nil {
			return err
		}
	}
	return nil
}

func rawOrNull(s sql.NullString) json.RawMessage {
	if !s.Valid || s.String == "" {
		return json.RawMessage("null")
	}
	return json.RawMessage(s.String)
}

func hasStatus(ss []store.RunStatus, s store.RunStatus) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// refreshGates sets the gate flags (021_run_gate.sql) of the tenant's workflow versions
// (workflow, version "": every one) from the pauses and hooks the write now holds.
func (w *wtx) refreshGates(tenantID, workflow, version string) error {
	_, err := w.exec("refresh_workflow_gates", tenantID, workflow, version)
	return err
}

// PutHook creates or replaces a tenant hook, and marks hooked the open runs it names.
func (s *Store) PutHook(ctx context.Context, h store.Hook) (_ store.Hook, _ bool, err error) {
	defer classify(&err)
	statuses, _ := json.Marshal(h.When)
	var (
		out     store.Hook
		created bool
	)
	var startVersion any
	if h.StartWorkflow != "" {
		startVersion = h.StartVersion
	}
	err = s.write(ctx, "put hook "+h.ID, func(w *wtx) error {
		var existed bool
		if err := w.queryRow("hook_exists", h.TenantID, h.ID).Scan(&existed); err != nil {
			return err
		}
		created = !existed
		out, err = scanHook(w.queryRow("put_hook", h.TenantID, h.ID, h.Workflow, h.Version, string(statuses),
			nullIfEmpty(h.StartWorkflow), startVersion, nullIfEmpty(h.URL), micros(w.now)))
		if errors.Is(err, sql.ErrNoRows) {
			if existed {
				return fmt.Errorf("%w: a module's hook has this id", store.ErrConflict)
			}
			return fmt.Errorf("tenant %s: %w", h.TenantID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		// Set inside the write: a run created after this commit must see the hook.
		w.s.anyHooks.Store(true)
		if err := w.refreshGates(h.TenantID, "", ""); err != nil {
			return err
		}
		// The hook reaches the runs open now too: every run that ends after it is set. One
		// writer holds the store, so no run's creation can slip between this and the gate.
		_, err = w.exec("mark_hooked_runs", h.TenantID, h.Workflow, h.Version)
		return err
	})
	if err != nil {
		return store.Hook{}, false, fmt.Errorf("put hook %s: %w", h.ID, err)
	}
	return out, created, nil
}

// ListHooks returns the tenant's hooks by id.
func (s *Store) ListHooks(ctx context.Context, tenantID string) (_ []store.Hook, err error) {
	defer classify(&err)
	rows, err := s.rdb.QueryContext(ctx, s.q("list_hooks"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("list hooks: %w", err)
	}
	out, err := collect(rows, scanHook)
	if err != nil {
		return nil, fmt.Errorf("list hooks: %w", err)
	}
	return out, nil
}

// DeleteHook removes a tenant hook.
func (s *Store) DeleteHook(ctx context.Context, tenantID, id string) (err error) {
	defer classify(&err)
	return s.write(ctx, "delete hook "+id, func(w *wtx) error {
		n, err := w.affected("delete_hook", tenantID, id)
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		if err == nil {
			// The runs marked hooked stay so: their ends find no hook and write nothing.
			err = w.refreshGates(tenantID, "", "")
		}
		if err != nil {
			return fmt.Errorf("delete hook %s: %w", id, err)
		}
		return nil
	})
}

// HookSecret returns the tenant's signing secret, storing create first when it has none.
func (s *Store) HookSecret(ctx context.Context, tenantID string, create []byte) (_ []byte, _ bool, err error) {
	defer classify(&err)
	var (
		secret  []byte
		created bool
	)
	err = s.write(ctx, "hook signing secret", func(w *wtx) error {
		secret, created = nil, false
		err := w.queryRow("get_hook_secret", tenantID).Scan(&secret)
		if !errors.Is(err, sql.ErrNoRows) || create == nil {
			return notFound(err)
		}
		if _, err := w.exec("put_hook_secret", tenantID, create, micros(w.now)); err != nil {
			return err
		}
		secret, created = create, true
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("hook signing secret: %w", err)
	}
	return secret, created, nil
}

// RotateHookSecret replaces the tenant's signing secret.
func (s *Store) RotateHookSecret(ctx context.Context, tenantID string, secret []byte) (err error) {
	defer classify(&err)
	return s.write(ctx, "rotate hook signing secret", func(w *wtx) error {
		_, err := w.exec("put_hook_secret", tenantID, secret, micros(w.now))
		return err
	})
}

// ReplaceHookSecret sets the tenant's signing secret to next if it is still prev.
func (s *Store) ReplaceHookSecret(ctx context.Context, tenantID string, prev, next []byte) (_ bool, err error) {
	defer classify(&err)
	var n int64
	err = s.write(ctx, "replace hook signing secret", func(w *wtx) error {
		var err error
		n, err = w.affected("replace_hook_secret", tenantID, prev, next)
		return err
	})
	return n == 1, err
}

// ClaimDeliveries leases due webhook deliveries to owner: the writer is the one writer, so no
// two claims ever see the same row free.
func (s *Store) ClaimDeliveries(ctx context.Context, owner string, leaseFor time.Duration, limit int) (_ []store.HookDelivery, err error) {
	defer classify(&err)
	var out []store.HookDelivery
	err = s.write(ctx, "claim hook deliveries", func(w *wtx) error {
		rows, err := w.query("claim_deliveries", owner, micros(w.now.Add(leaseFor)), limit, micros(w.now))
		if err != nil {
			return err
		}
		out, err = collect(rows, scanDelivery)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim hook deliveries: %w", err)
	}
	return out, nil
}

// EndDeliveryAttempt records an attempt's outcome, fenced by owner and attempt.
func (s *Store) EndDeliveryAttempt(ctx context.Context, id, owner string, attempt int, out store.DeliveryOutcome) (_ bool, err error) {
	defer classify(&err)
	a, _ := json.Marshal(out.Attempt)
	var n int64
	err = s.write(ctx, "end hook delivery attempt", func(w *wtx) error {
		var err error
		n, err = w.affected("end_delivery_attempt", id, owner, attempt, string(a), out.Delivered, timeArg(out.RetryAt), micros(w.now))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("end hook delivery attempt: %w", err)
	}
	return n == 1, nil
}

// StartHookDelivery starts the run of a pending start delivery owner holds. This store starts
// every hook's run in the transaction that ends the run (hooksEnded), flow control included,
// so it never leaves one pending; a row that is (a database written by another version) is
// started here as hooksEnded would, at the workflow's latest version.
func (s *Store) StartHookDelivery(ctx context.Context, id, owner string, attempt int) (ok bool, err error) {
	defer classify(&err)
	err = s.write(ctx, "start hook delivery "+id, func(w *wtx) error {
		var (
			tenant, endedRun, hookID, target, payload string
			retention                                 int
		)
		err := w.queryRow("hook_start_lock", id, owner, attempt).Scan(&tenant, &endedRun, &hookID, &target, &payload, &retention)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		end := func(status string, started, why any) error {
			_, err := w.exec("hook_start_end", id, status, started, why, micros(w.now))
			return err
		}
		var (
			name, ver, digest string
			wfRetention       int
		)
		err = w.queryRow("latest_workflow", tenant, target, "").Scan(&name, &ver, &digest, &wfRetention)
		if errors.Is(err, sql.ErrNoRows) {
			return end(store.DeliveryFailed, nil, "workflow_not_found: the tenant has no workflow "+target)
		}
		if err != nil {
			return err
		}
		run, _, err := w.startRun(store.NewRun{TenantID: tenant, Workflow: name, Version: ver, Digest: digest,
			Input: json.RawMessage(payload), IdempotencyKey: "hook:" + endedRun + ":" + hookID,
			RetentionDays: store.RetentionDays(0, wfRetention, retention, 0), Attempt: 1}, startHow{})
		if errors.Is(err, abi.ErrFlowKey) {
			return end(store.DeliveryFailed, nil, "flow_key: "+err.Error())
		}
		if err != nil {
			return err
		}
		return end(store.DeliveryDelivered, run.ID, nil)
	})
	if err != nil {
		return false, fmt.Errorf("start hook delivery %s: %w", id, err)
	}
	return ok, nil
}

// NextDeliveryDue is the earliest next attempt of a pending webhook.
func (s *Store) NextDeliveryDue(ctx context.Context) (_ time.Time, _ bool, err error) {
	defer classify(&err)
	var at sql.NullInt64
	if err := s.rdb.QueryRowContext(ctx, s.q("next_delivery_due")).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("next hook delivery due: %w", err)
	}
	if !at.Valid {
		return time.Time{}, false, nil
	}
	return fromMicros(at.Int64), true, nil
}

// CountPendingDeliveries returns the outbox by tenant.
func (s *Store) CountPendingDeliveries(ctx context.Context) (_ []store.PendingDeliveries, err error) {
	defer classify(&err)
	rows, err := s.rdb.QueryContext(ctx, s.q("pending_deliveries"))
	if err != nil {
		return nil, fmt.Errorf("count pending hook deliveries: %w", err)
	}
	defer rows.Close()
	var out []store.PendingDeliveries
	for rows.Next() {
		var (
			p   store.PendingDeliveries
			due int64
		)
		if err := rows.Scan(&p.TenantID, &p.Pending, &due); err != nil {
			return nil, fmt.Errorf("count pending hook deliveries: %w", err)
		}
		p.EarliestDue = fromMicros(due)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count pending hook deliveries: %w", err)
	}
	return out, nil
}

// ListDeliveries returns the tenant's deliveries, newest first.
func (s *Store) ListDeliveries(ctx context.Context, tenantID string, f store.DeliveryFilter) (_ []store.HookDelivery, err error) {
	defer classify(&err)
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.rdb.QueryContext(ctx, s.q("list_deliveries"), tenantID, f.RunID, f.StartedRunID, f.Status, limit)
	if err != nil {
		return nil, fmt.Errorf("list hook deliveries: %w", err)
	}
	out, err := collect(rows, scanDelivery)
	if err != nil {
		return nil, fmt.Errorf("list hook deliveries: %w", err)
	}
	return out, nil
}

func scanHook(r scanner) (store.Hook, error) {
	var (
		h        store.Hook
		statuses string
		created  int64
	)
	if err := r.Scan(&h.TenantID, &h.ID, &h.Source, &h.Workflow, &h.Version, &statuses, &h.StartWorkflow, &h.StartVersion,
		&h.URL, &created); err != nil {
		return store.Hook{}, err
	}
	h.CreatedAt = fromMicros(created)
	return h, json.Unmarshal([]byte(statuses), &h.When)
}

func scanDelivery(r scanner) (store.HookDelivery, error) {
	var (
		d                store.HookDelivery
		payload, log     string
		next             sql.NullInt64
		created, updated int64
	)
	if err := r.Scan(&d.ID, &d.TenantID, &d.RunID, &d.HookID, &d.Kind, &d.Target, &payload, &d.Depth, &d.Status,
		&d.Attempts, &log, &d.LastError, &d.StartedRunID, &next, &created, &updated); err != nil {
		return store.HookDelivery{}, err
	}
	d.Payload = json.RawMessage(payload)
	if next.Valid {
		t := fromMicros(next.Int64)
		d.NextAt = &t
	}
	d.CreatedAt, d.UpdatedAt = fromMicros(created), fromMicros(updated)
	return d, json.Unmarshal([]byte(log), &d.AttemptLog)
}
