-- The workflow of a run: a child's parent's, read only when the child's workflow has flow
-- control (start.go). $1 run.
SELECT workflow FROM runs WHERE id = $1
