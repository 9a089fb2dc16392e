-- Live children whose link says their parent's end cancels them, whose parent has ended or been
-- swept, and of which no cancel has been asked: what a parent's end left running when its
-- host died before closing them (store.Store.OrphanedChildren). $1 how many.
SELECT c.tenant_id, c.id::text, p.parent_run_id::text
FROM runs c
JOIN run_parents p ON p.run_id = c.id
LEFT JOIN runs parent ON parent.id = p.parent_run_id
WHERE c.is_child AND c.status IN ('pending', 'running', 'paused', 'nondeterministic')
  AND c.cancel_requested_at IS NULL
  AND p.parent_close = 'cancel'
  AND (parent.id IS NULL OR parent.status IN ('completed', 'failed', 'cancelled', 'continued'))
ORDER BY p.created_at, c.id
LIMIT $1
