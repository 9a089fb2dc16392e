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

// Completion hooks. A run's hooks are written by the deferred trigger hooks_ended
// (migrations/025_hooks.sql, 026_run_gate.sql) in the transaction that ends it, for runs marked
// hooked: at their creation, when their workflow's gate says a hook names it, or when a hook
// that names them is set while they are open (PutHook); everything here is the hooks' own CRUD
// and the webhook dispatcher's outbox.

// PutHook creates or replaces a tenant hook, sets the gate of the workflows it names and marks
// their open runs hooked, in one transaction; then waits out the run inserts in flight and
// marks again, as PauseWorkflow pauses (021_pause.sql has the argument): a run whose insert
// read the gate before the hook committed is marked by the second pass. So the hook fires for
// every run that ends after PutHook returns.
func (s *Store) PutHook(ctx context.Context, h store.Hook) (_ store.Hook, _ bool, err error) {
	defer classify(&err)
	var (
		created bool
		out     store.Hook
		second  bool
	)
	err = s.twoPasses(ctx, func(tx pgx.Tx) error {
		if !second {
			var err error
			if out, err = scanHook(tx.QueryRow(ctx, s.q("put_hook"), h.TenantID, h.ID, h.Workflow, h.Version,
				statusStrings(h.When), nullIfEmpty(h.StartWorkflow), startVersion(h), nullIfEmpty(h.URL)), &created); err != nil {
				return err
			}
			if err := s.refreshGates(ctx, tx, h.TenantID, "", ""); err != nil {
				return err
			}
		}
		var marked int
		return tx.QueryRow(ctx, s.q("mark_hooked_runs"), h.TenantID, h.Workflow, h.Version).Scan(&marked)
	}, func() { second = true })
	if errors.Is(err, pgx.ErrNoRows) {
		if _, terr := s.GetTenant(ctx, h.TenantID); terr != nil {
			return store.Hook{}, false, fmt.Errorf("put hook %s: %w", h.ID, terr)
		}
		return store.Hook{}, false, fmt.Errorf("put hook %s: %w: a module's hook has this id", h.ID, store.ErrConflict)
	}
	if err != nil {
		return store.Hook{}, false, fmt.Errorf("put hook %s: %w", h.ID, err)
	}
	return out, created, nil
}

// startVersion is the start_version column: ” for a start hook's latest version, NULL for a
// webhook.
func startVersion(h store.Hook) any {
	if h.StartWorkflow == "" {
		return nil
	}
	return h.StartVersion
}

// ListHooks returns the tenant's hooks by id.
func (s *Store) ListHooks(ctx context.Context, tenantID string) (_ []store.Hook, err error) {
	defer classify(&err)
	rows, err := s.pool.Query(ctx, s.q("list_hooks"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("list hooks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Hook, error) {
		var created bool
		return scanHook(r, &created)
	})
	if err != nil {
		return nil, fmt.Errorf("list hooks: %w", err)
	}
	return out, nil
}

// DeleteHook removes a tenant hook.
func (s *Store) DeleteHook(ctx context.Context, tenantID, id string) (err error) {
	defer classify(&err)
	// The gate is lifted with the hook; the open runs stay marked (their ends find no hook and
	// write nothing), since unmarking them would race a hook set again meanwhile.
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, s.q("delete_hook"), tenantID, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		return s.refreshGates(ctx, tx, tenantID, "", "")
	})
	if err != nil {
		return fmt.Errorf("delete hook %s: %w", id, err)
	}
	return nil
}

// HookSecret returns the tenant's signing secret, storing create first when it has none.
func (s *Store) HookSecret(ctx context.Context, tenantID string, create []byte) (_ []byte, _ bool, err error) {
	defer classify(&err)
	var (
		secret  []byte
		created bool
	)
	var arg any
	if create != nil {
		arg = create
	}
	err = s.pool.QueryRow(ctx, s.q("hook_secret"), tenantID, arg).Scan(&secret, &created)
	if err != nil {
		return nil, false, fmt.Errorf("hook signing secret: %w", notFound(err))
	}
	return secret, created, nil
}

// RotateHookSecret replaces the tenant's signing secret.
func (s *Store) RotateHookSecret(ctx context.Context, tenantID string, secret []byte) (err error) {
	defer classify(&err)
	if _, err := s.pool.Exec(ctx, s.q("rotate_hook_secret"), tenantID, secret); err != nil {
		return fmt.Errorf("rotate hook signing secret: %w", err)
	}
	return nil
}

// ReplaceHookSecret sets the tenant's signing secret to next if it is still prev.
func (s *Store) ReplaceHookSecret(ctx context.Context, tenantID string, prev, next []byte) (_ bool, err error) {
	defer classify(&err)
	tag, err := s.pool.Exec(ctx, s.q("replace_hook_secret"), tenantID, prev, next)
	if err != nil {
		return false, fmt.Errorf("replace hook signing secret: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ClaimDeliveries leases due webhook deliveries to owner.
func (s *Store) ClaimDeliveries(ctx context.Context, owner string, leaseFor time.Duration, limit int) (_ []store.HookDelivery, err error) {
	defer classify(&err)
	return s.deliveries(ctx, "claim hook deliveries", s.q("claim_deliveries"), owner, leaseFor.Milliseconds(), limit)
}

// EndDeliveryAttempt records an attempt's outcome, fenced by owner and attempt.
func (s *Store) EndDeliveryAttempt(ctx context.Context, id, owner string, attempt int, out store.DeliveryOutcome) (_ bool, err error) {
	defer classify(&err)
	if !validUUID(id) {
		return false, nil
	}
	a, _ := json.Marshal(out.Attempt)
	tag, err := s.pool.Exec(ctx, s.q("end_delivery_attempt"), id, owner, attempt, a, out.Delivered, out.RetryAt)
	if err != nil {
		return false, fmt.Errorf("end hook delivery attempt: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// StartHookDelivery starts the run of a pending start delivery (026_run_gate.sql: a hook
// whose workflow has flow control) through startRun, in one transaction with the delivery's
// outcome.
func (s *Store) StartHookDelivery(ctx context.Context, id, owner string, attempt int) (ok bool, err error) {
	defer classify(&err)
	if !validUUID(id) {
		return false, nil
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var (
			tenant, endedRun, hookID, workflow, version string
			payload                                     []byte
			retention                                   int
		)
		err := tx.QueryRow(ctx, s.q("hook_start_lock"), id, owner, attempt).
			Scan(&tenant, &endedRun, &hookID, &workflow, &version, &payload, &retention)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		end := func(status string, started, why any) error {
			_, err := tx.Exec(ctx, s.q("hook_start_end"), id, status, started, why)
			return err
		}
		n := store.NewRun{TenantID: tenant, Workflow: workflow, Version: version, Input: payload,
			IdempotencyKey: "hook:" + endedRun + ":" + hookID, DefaultRetentionDays: retention, Attempt: 1}
		n, _, wfRet, _, found, err := s.flowWorkflow(ctx, tx, n)
		if err != nil {
			return err
		}
		if !found {
			return end(store.DeliveryFailed, nil, fmt.Sprintf("workflow_not_found: the tenant has no workflow %s version %s", workflow, version))
		}
		n.RetentionDays = store.RetentionDays(0, wfRet, retention, 0)
		run, _, err := s.startRun(ctx, tx, n, startHow{})
		if errors.Is(err, pgx.ErrNoRows) {
			run, err = scanRun(tx.QueryRow(ctx, s.q("get_run_by_key"), n.TenantID, n.Workflow, n.IdempotencyKey))
		}
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
	var at *time.Time
	if err := s.pool.QueryRow(ctx, s.q("next_delivery_due")).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("next hook delivery due: %w", err)
	}
	if at == nil {
		return time.Time{}, false, nil
	}
	return *at, true, nil
}

// CountPendingDeliveries returns the outbox by tenant.
func (s *Store) CountPendingDeliveries(ctx context.Context) (_ []store.PendingDeliveries, err error) {
	defer classify(&err)
	rows, err := s.pool.Query(ctx, s.q("pending_deliveries"))
	if err != nil {
		return nil, fmt.Errorf("count pending hook deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.PendingDeliveries, error) {
		var p store.PendingDeliveries
		err := r.Scan(&p.TenantID, &p.Pending, &p.EarliestDue)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("count pending hook deliveries: %w", err)
	}
	return out, nil
}

// ListDeliveries returns the tenant's deliveries, newest first.
func (s *Store) ListDeliveries(ctx context.Context, tenantID string, f store.DeliveryFilter) (_ []store.HookDelivery, err error) {
	defer classify(&err)
	if (f.RunID != "" && !validUUID(f.RunID)) || (f.StartedRunID != "" && !validUUID(f.StartedRunID)) {
		return nil, nil
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	return s.deliveries(ctx, "list hook deliveries", s.q("list_deliveries"), tenantID, f.RunID, f.StartedRunID, f.Status, limit)
}

func (s *Store) deliveries(ctx context.Context, what, text string, args ...any) ([]store.HookDelivery, error) {
	rows, err := s.pool.Query(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.HookDelivery, error) {
		var (
			d   store.HookDelivery
			log []byte
		)
		err := r.Scan(&d.ID, &d.TenantID, &d.RunID, &d.HookID, &d.Kind, &d.Target, &d.Payload, &d.Depth, &d.Status,
			&d.Attempts, &log, &d.LastError, &d.StartedRunID, &d.NextAt, &d.CreatedAt, &d.UpdatedAt)
		if err == nil {
			err = json.Unmarshal(log, &d.AttemptLog)
		}
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

func scanHook(r pgx.Row, created *bool) (store.Hook, error) {
	var (
		h        store.Hook
		statuses []string
	)
	err := r.Scan(&h.TenantID, &h.ID, &h.Source, &h.Workflow, &h.Version, &statuses, &h.StartWorkflow, &h.StartVersion,
		&h.URL, &h.CreatedAt, created)
	for _, st := range statuses {
		h.When = append(h.When, store.RunStatus(st))
	}
	return h, err
}

func statusStrings(ss []store.RunStatus) []string {
	out := make([]string, len(ss))
	for i, st := range ss {
		out[i] = string(st)
	}
	return out
}
