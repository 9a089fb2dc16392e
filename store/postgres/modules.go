package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/internal/workflows"
)

// EnsureTenant creates the tenant if it does not exist.
func (s *Store) EnsureTenant(ctx context.Context, tenantID string) (err error) {
	defer classify(&err)
	if _, err := s.pool.Exec(ctx, s.q("ensure_tenant"), tenantID); err != nil {
		return fmt.Errorf("ensure tenant: %w", err)
	}
	return nil
}

// PutModule stores the module and binds its workflows, in one transaction; see store.Store.
// Deploys are rare, so this favours plain statements over round-trip counting.
func (s *Store) PutModule(ctx context.Context, m store.Module, workflows []store.Workflow, replace bool) (_ []store.Workflow, err error) {
	defer classify(&err)
	var out []store.Workflow
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var moved int
		out, moved, err = s.putModule(ctx, tx, m, workflows, replace, replace)
		if err != nil || moved == 0 {
			return err
		}
		_, err = tx.Exec(ctx, s.q("notify"), s.wakeChannel, s.appName)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("put module: %w", err)
	}
	if err := s.markHookedAfterBind(ctx, m.TenantID, workflows); err != nil {
		return nil, fmt.Errorf("put module: %w", err)
	}
	return out, nil
}

// putModule stores m and binds workflows to it in tx (rebinding with replace), moving the
// rebound versions' live runs with moveLive, and says how many it moved.
func (s *Store) putModule(ctx context.Context, tx pgx.Tx, m store.Module, workflows []store.Workflow, replace, moveLive bool) ([]store.Workflow, int, error) {
	var out []store.Workflow
	if _, err := tx.Exec(ctx, s.q("put_module"), m.TenantID, m.Digest, m.Bytes, m.Size, m.ABIVersion); err != nil {
		return nil, 0, err
	}
	moved := 0
	for _, w := range workflows {
		retry, err := json.Marshal(w.Retry)
		if err != nil {
			return nil, 0, err
		}
		triggers := w.Triggers
		if triggers == nil {
			triggers = []string{}
		}
		stored, err := scanWorkflow(tx.QueryRow(ctx, s.q("bind_workflow"), m.TenantID, w.Name, w.Version, m.Digest,
			w.RetentionDays, string(retry), triggers, replace, flowArg(w.Flow)))
		if errors.Is(err, pgx.ErrNoRows) {
			var bound string
			_ = tx.QueryRow(ctx, s.q("bound_digest"), m.TenantID, w.Name, w.Version).Scan(&bound)
			return nil, 0, fmt.Errorf("%w: workflow %s version %s is bound to module %.12s; deploy with replace to rebind it",
				store.ErrConflict, w.Name, w.Version, bound)
		}
		if err != nil {
			return nil, 0, err
		}
		stored.Flow = w.Flow
		if err := s.bindModuleHooks(ctx, tx, m.TenantID, w); err != nil {
			return nil, 0, err
		}
		if moveLive {
			var n int
			if err := tx.QueryRow(ctx, s.q("move_live_runs"), m.TenantID, w.Name, w.Version, m.Digest).Scan(&n); err != nil {
				return nil, 0, err
			}
			moved += n
		}
		out = append(out, stored)
	}
	return out, moved, nil
}

func scanWorkflow(row pgx.Row) (store.Workflow, error) {
	var (
		w     store.Workflow
		retry []byte
	)
	if err := row.Scan(&w.TenantID, &w.Name, &w.Version, &w.Digest, &w.RetentionDays, &retry, &w.Triggers, &w.CreatedAt); err != nil {
		return store.Workflow{}, err
	}
	if err := json.Unmarshal(retry, &w.Retry); err != nil {
		return store.Workflow{}, fmt.Errorf("decode retry policy: %w", err)
	}
	return w, nil
}

// GetModule returns one module with its bytes.
func (s *Store) GetModule(ctx context.Context, tenantID, digest string) (_ store.Module, err error) {
	defer classify(&err)
	var m store.Module
	err = s.pool.QueryRow(ctx, s.q("get_module"), tenantID, digest).Scan(&m.TenantID, &m.Digest, &m.Size, &m.ABIVersion, &m.CreatedAt, &m.Bytes)
	if err != nil {
		return store.Module{}, fmt.Errorf("get module: %w", notFound(err))
	}
	return m, nil
}

// ListModules lists the tenant's modules without their bytes.
func (s *Store) ListModules(ctx context.Context, tenantID string) (_ []store.Module, err error) {
	defer classify(&err)
	rows, err := s.pool.Query(ctx, s.q("list_modules"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("list modules: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Module, error) {
		var m store.Module
		err := r.Scan(&m.TenantID, &m.Digest, &m.Size, &m.ABIVersion, &m.CreatedAt, &m.Bytes)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("list modules: %w", err)
	}
	return out, nil
}

// ResolveWorkflow finds a version, the latest bound one when version is "".
func (s *Store) ResolveWorkflow(ctx context.Context, tenantID, name, version string) (_ store.Workflow, err error) {
	defer classify(&err)
	w, err := scanWorkflow(s.pool.QueryRow(ctx, s.q("resolve_workflow"), tenantID, name, version))
	if err != nil {
		return store.Workflow{}, workflows.ResolveError(name, version, notFound(err))
	}
	return w, nil
}

// ListWorkflows lists workflow names with their versions and run counts by status.
func (s *Store) ListWorkflows(ctx context.Context, tenantID string) (_ []store.WorkflowSummary, err error) {
	defer classify(&err)
	versions, err := s.pool.Query(ctx, s.q("list_workflow_versions"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("list workflows: %w", err)
	}
	out, err := workflows.Summaries(versions)
	versions.Close()
	if err != nil {
		return nil, err
	}
	counts, err := s.pool.Query(ctx, s.q("count_runs"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	defer counts.Close()
	return out, workflows.AddRunCounts(out, counts)
}

// markHookedAfterBind is the second pass of a bind that set module hooks (bindModuleHooks): a
// run of a version with hooks whose insert read the version's gate before the bind committed
// is marked hooked once the run inserts in flight are waited out, as PutHook's second pass
// does (twoPasses). Without it, a run started while its version was rebound with hooks could
// end without them.
func (s *Store) markHookedAfterBind(ctx context.Context, tenant string, workflows []store.Workflow) error {
	waited := false
	for _, w := range workflows {
		w.TenantID = tenant
		if len(store.ModuleHooks(w)) == 0 {
			continue
		}
		if !waited {
			var n int
			if err := s.pool.QueryRow(ctx, s.q("runs_writers_wait")).Scan(&n); err != nil {
				return fmt.Errorf("wait for the starts in flight: %w", err)
			}
			waited = true
		}
		var marked int
		if err := s.pool.QueryRow(ctx, s.q("mark_hooked_runs"), tenant, w.Name, w.Version).Scan(&marked); err != nil {
			return fmt.Errorf("mark the open runs of %s version %s hooked: %w", w.Name, w.Version, err)
		}
	}
	return nil
}

// bindModuleHooks replaces the module hooks of the workflow version w (its onEnd) and sets the
// version's gate (026_run_gate.sql) from the pauses and hooks that name it: a version bound
// after its workflow's pause or a tenant hook starts its runs paused or hooked. A version
// rebound with hooks (a hotfix) marks its open runs hooked, as PutHook does, here and again
// after the commit (markHookedAfterBind).
func (s *Store) bindModuleHooks(ctx context.Context, tx pgx.Tx, tenant string, w store.Workflow) error {
	if _, err := tx.Exec(ctx, s.q("delete_module_hooks"), tenant, w.Name, w.Version); err != nil {
		return err
	}
	w.TenantID = tenant
	hooks := store.ModuleHooks(w)
	for _, h := range hooks {
		if _, err := tx.Exec(ctx, s.q("insert_module_hook"), tenant, h.ID, h.Workflow, h.Version, statusStrings(h.When),
			nullIfEmpty(h.StartWorkflow), startVersion(h), nullIfEmpty(h.URL)); err != nil {
			return err
		}
	}
	if err := s.refreshGates(ctx, tx, tenant, w.Name, w.Version); err != nil {
		return err
	}
	if len(hooks) > 0 {
		var marked int
		return tx.QueryRow(ctx, s.q("mark_hooked_runs"), tenant, w.Name, w.Version).Scan(&marked)
	}
	return nil
}
