-- StartChild: links a child run to the parent step that started it, and marks the run a child
-- (runs.is_child, which the end trigger of 020_children.sql reads instead of run_parents).
-- $1 child, $2 parent, $3 parent's step key, $4 parent-close policy, $5 awaited.
WITH linked AS (
    INSERT INTO run_parents (run_id, parent_run_id, parent_key, parent_close, awaited)
    VALUES ($1, $2, $3, $4, $5)
    RETURNING run_id
)
UPDATE runs SET is_child = true FROM linked WHERE runs.id = linked.run_id
