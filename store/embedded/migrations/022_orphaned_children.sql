-- The children a parent's end left running (store.Store.OrphanedChildren), as store/postgres's
-- 028_orphaned_children.sql: an index of the live children only, for the sweep.
CREATE INDEX runs_live_children ON runs (id) WHERE is_child = 1 AND status IN ('pending', 'running', 'paused', 'nondeterministic');
