-- The children a parent's end left running (store.Store.OrphanedChildren): the engine closes
-- a parent's parentClose=cancel children after the end commits, and a host that dies between
-- the two leaves them for the sweep, which looks for them through this index of the live
-- children only: nearly every run is no child, and a child leaves it when it ends, so the
-- sweep reads what is live and linked, not every run or every link.
CREATE INDEX runs_live_children ON runs (id) WHERE is_child AND status IN ('pending', 'running', 'paused', 'nondeterministic');
