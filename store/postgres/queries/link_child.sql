-- StartChild: links a child run to the parent step that started it. $1 child, $2 parent,
-- $3 parent's step key, $4 parent-close policy, $5 awaited.
INSERT INTO run_parents (run_id, parent_run_id, parent_key, parent_close, awaited)
VALUES ($1, $2, $3, $4, $5)
