-- The end of a child run, for its parent's step. ?1 run.
SELECT workflow, status, output, error, coalesce(continued_as, '') FROM runs WHERE id = ?1
