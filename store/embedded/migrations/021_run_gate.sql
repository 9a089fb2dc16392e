-- One gate for every run insert, as store/postgres's 026_run_gate.sql: a new run reads its
-- workflow version's row (paused, hooked, flow) in its own INSERT, by primary key, instead of
-- two probes of workflow_pauses and the AFTER INSERT trigger runs_hooked (020). The flags are
-- kept by a workflow's pause and resume, a hook's put and delete, and a version's binding
-- (refresh_workflow_gates.sql).
ALTER TABLE workflows ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflows ADD COLUMN hooked INTEGER NOT NULL DEFAULT 0;

UPDATE workflows
SET paused = EXISTS (SELECT 1 FROM workflow_pauses p
                     WHERE p.tenant_id = workflows.tenant_id AND p.workflow = workflows.name AND p.version IN ('', workflows.version)),
    hooked = EXISTS (SELECT 1 FROM hooks h
                     WHERE h.tenant_id = workflows.tenant_id AND h.workflow IN ('', workflows.name) AND h.version IN ('', workflows.version));

DROP TRIGGER runs_hooked;

-- A hook reaches every run that ends after it is set (mark_hooked_runs.sql): the open runs of
-- hooks set before this migration are marked once here.
UPDATE runs
SET hooked = 1
WHERE hooked = 0 AND status IN ('pending', 'running', 'paused', 'nondeterministic')
  AND EXISTS (SELECT 1 FROM hooks h
              WHERE h.tenant_id = runs.tenant_id AND h.workflow IN ('', runs.workflow) AND h.version IN ('', runs.version));

-- What started a run, for the starts nothing else records (026_run_gate.sql in store/postgres).
ALTER TABLE runs ADD COLUMN trigger TEXT;
