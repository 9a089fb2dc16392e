-- Live children whose parent's end should have cancelled them, as store/postgres's
-- orphaned_children.sql (store.Store.OrphanedChildren). ?1 how many.
SELECT c.tenant_id, c.id, p.parent_run_id
FROM runs c
JOIN run_parents p ON p.run_id = c.id
LEFT JOIN runs parent ON parent.id = p.parent_run_id
WHERE c.is_child = 1 AND c.status IN ('pending', 'running', 'paused', 'nondeterministic')
  AND c.cancel_requested_at IS NULL
  AND p.parent_close = 'cancel'
  AND (parent.id IS NULL OR parent.status IN ('completed', 'failed', 'cancelled', 'continued'))
ORDER BY p.created_at, c.id
LIMIT ?1
