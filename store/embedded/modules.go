package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/internal/workflows"
)

// PutModule stores the module and binds its workflows, in one transaction; see store.Store.
func (s *Store) PutModule(ctx context.Context, m store.Module, workflows []store.Workflow, replace bool) (_ []store.Workflow, err error) {
	defer classify(&err)
	var out []store.Workflow
	err = s.write(ctx, "put module", func(w *wtx) error {
		stored, moved, err := w.putModule(m, workflows, replace, replace)
		if err == nil && moved > 0 {
			w.wake()
		}
		out = stored
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("put module: %w", err)
	}
	return out, nil
}

// putModule stores m and binds workflows to it (rebinding with replace), moving the rebound
// versions' live runs with moveLive, and says how many it moved.
func (w *wtx) putModule(m store.Module, workflows []store.Workflow, replace, moveLive bool) ([]store.Workflow, int64, error) {
	var out []store.Workflow
	if _, err := w.exec("put_module", m.TenantID, m.Digest, m.Bytes, m.Size, m.ABIVersion, micros(w.now)); err != nil {
		return nil, 0, err
	}
	moved := int64(0)
	for _, wf := range workflows {
		retry, err := json.Marshal(wf.Retry)
		if err != nil {
			return nil, 0, err
		}
		triggers := wf.Triggers
		if triggers == nil {
			triggers = []string{}
		}
		trig, err := json.Marshal(triggers)
		if err != nil {
			return nil, 0, err
		}
		var bound string
		switch err := w.queryRow("bound_digest", m.TenantID, wf.Name, wf.Version).Scan(&bound); {
		case errors.Is(err, sql.ErrNoRows):
			_, err = w.exec("insert_workflow", m.TenantID, wf.Name, wf.Version, m.Digest, wf.RetentionDays,
				string(retry), string(trig), micros(w.now))
			if err != nil {
				return nil, 0, err
			}
		case err != nil:
			return nil, 0, err
		case bound != m.Digest && !replace:
			return nil, 0, fmt.Errorf("%w: workflow %s version %s is bound to module %.12s; deploy with replace to rebind it",
				store.ErrConflict, wf.Name, wf.Version, bound)
		default:
			// The same module again keeps its place in binding order; a rebind (a hotfix)
			// becomes the most recently bound version.
			if _, err := w.exec("rebind_workflow", m.TenantID, wf.Name, wf.Version, m.Digest, wf.RetentionDays,
				string(retry), string(trig), bound != m.Digest); err != nil {
				return nil, 0, err
			}
		}
		wf.TenantID = m.TenantID
		if err := w.setFlow(wf); err != nil {
			return nil, 0, err
		}
		if err := w.bindModuleHooks(m.TenantID, wf); err != nil {
			return nil, 0, err
		}
		if moveLive {
			if _, err := w.exec("delete_moving_snapshots", m.TenantID, wf.Name, wf.Version, m.Digest); err != nil {
				return nil, 0, err
			}
			n, err := w.affected("move_live_runs", m.TenantID, wf.Name, wf.Version, m.Digest, micros(w.now))
			if err != nil {
				return nil, 0, err
			}
			moved += n
		}
		stored, err := scanWorkflow(w.queryRow("get_workflow", m.TenantID, wf.Name, wf.Version))
		if err != nil {
			return nil, 0, err
		}
		stored.Flow = wf.Flow
		out = append(out, stored)
	}
	return out, moved, nil
}

func scanWorkflow(row scanner) (store.Workflow, error) {
	var (
		w               store.Workflow
		retry, triggers string
		created         int64
	)
	if err := row.Scan(&w.TenantID, &w.Name, &w.Version, &w.Digest, &w.RetentionDays, &retry, &triggers, &created); err != nil {
		return store.Workflow{}, err
	}
	if err := json.Unmarshal([]byte(retry), &w.Retry); err != nil {
		return store.Workflow{}, fmt.Errorf("decode retry policy: %w", err)
	}
	if err := json.Unmarshal([]byte(triggers), &w.Triggers); err != nil {
		return store.Workflow{}, fmt.Errorf("decode triggers: %w", err)
	}
	w.CreatedAt = fromMicros(created)
	return w, nil
}

func scanModule(row scanner) (store.Module, error) {
	var (
		m       store.Module
		created int64
	)
	if err := row.Scan(&m.TenantID, &m.Digest, &m.Size, &m.ABIVersion, &created, &m.Bytes); err != nil {
		return store.Module{}, err
	}
	m.CreatedAt = fromMicros(created)
	return m, nil
}

// GetModule returns one module with its bytes.
func (s *Store) GetModule(ctx context.Context, tenantID, digest string) (_ store.Module, err error) {
	defer classify(&err)
	m, err := scanModule(s.rdb.QueryRowContext(ctx, s.q("get_module"), tenantID, digest))
	if err != nil {
		return store.Module{}, fmt.Errorf("get module: %w", notFound(err))
	}
	return m, nil
}

// ListModules lists the tenant's modules without their bytes, newest first.
func (s *Store) ListModules(ctx context.Context, tenantID string) (_ []store.Module, err error) {
	defer classify(&err)
	rows, err := s.rdb.QueryContext(ctx, s.q("list_modules"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("list modules: %w", err)
	}
	out, err := collect(rows, scanModule)
	if err != nil {
		return nil, fmt.Errorf("list modules: %w", err)
	}
	return out, nil
}

// ResolveWorkflow finds a version, the latest bound one when version is "".
func (s *Store) ResolveWorkflow(ctx context.Context, tenantID, name, version string) (_ store.Workflow, err error) {
	defer classify(&err)
	w, err := scanWorkflow(s.rdb.QueryRowContext(ctx, s.q("resolve_workflow"), tenantID, name, version))
	if err != nil {
		return store.Workflow{}, workflows.ResolveError(name, version, notFound(err))
	}
	return w, nil
}

// ListWorkflows lists workflow names with their versions and run counts by status.
func (s *Store) ListWorkflows(ctx context.Context, tenantID string) (_ []store.WorkflowSummary, err error) {
	defer classify(&err)
	versions, err := s.rdb.QueryContext(ctx, s.q("list_workflow_versions"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("list workflows: %w", err)
	}
	out, err := workflows.Summaries(versions)
	versions.Close()
	if err != nil {
		return nil, err
	}
	counts, err := s.rdb.QueryContext(ctx, s.q("count_runs"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	defer counts.Close()
	return out, workflows.AddRunCounts(out, counts)
}

// TriggeredBy returns the workflows whose latest version declares event as a trigger.
func (s *Store) TriggeredBy(ctx context.Context, tenantID, event string) (_ []store.Workflow, err error) {
	defer classify(&err)
	rows, err := s.rdb.QueryContext(ctx, s.q("triggered_by"), tenantID, event)
	if err != nil {
		return nil, fmt.Errorf("workflows triggered by %s: %w", event, err)
	}
	out, err := collect(rows, scanWorkflow)
	if err != nil {
		return nil, fmt.Errorf("workflows triggered by %s: %w", event, err)
	}
	return out, nil
}

// bindModuleHooks replaces the module hooks of the workflow version wf (its onEnd) and sets the
// version's gate (021_run_gate.sql).
func (w *wtx) bindModuleHooks(tenant string, wf store.Workflow) error {
	if _, err := w.exec("delete_module_hooks", tenant, wf.Name, wf.Version); err != nil {
		return err
	}
	wf.TenantID = tenant
	hooks := store.ModuleHooks(wf)
	for _, h := range hooks {
		statuses, _ := json.Marshal(h.When)
		var startVersion any
		if h.StartWorkflow != "" {
			startVersion = h.StartVersion
		}
		if _, err := w.exec("insert_module_hook", tenant, h.ID, h.Workflow, h.Version, string(statuses),
			nullIfEmpty(h.StartWorkflow), startVersion, nullIfEmpty(h.URL), micros(w.now)); err != nil {
			return err
		}
		w.s.anyHooks.Store(true)
	}
	// The version's gate, from the pauses and hooks that name it; a version rebound with
	// hooks (a hotfix) reaches its open runs, as PutHook does.
	if err := w.refreshGates(tenant, wf.Name, wf.Version); err != nil {
		return err
	}
	if len(hooks) > 0 {
		_, err := w.exec("mark_hooked_runs", tenant, wf.Name, wf.Version)
		return err
	}
	return nil
}
