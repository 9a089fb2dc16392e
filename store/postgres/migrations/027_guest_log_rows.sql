-- Which of a batch of guest log lines a run's guest log keeps: the one owner of the run's
-- bounds (store.MaxGuestLogLines, store.MaxGuestLogBytes), for the two writes that keep
-- lines. append_guest_log.sql keeps lines on their own; a run's end keeps the lines of the
-- activation that ends it in its own statement (finish.sql, finish_step.sql), where before
-- they cost a statement and a commit of their own in every run that logged: 1.15 statements
-- per 1-step run became 2.20, and throughput fell to 0.75x (BENCHMARKS.md, "Throughput, stop
-- 32 to now").
--
-- lines is a JSON array of {at, level, message, stream, step} in order; NULL is none, and
-- then the run's guest rows are not even counted (the filter on it is a one-time filter).
-- The rows come with their place in lines (line_ord, from 1: an insert orders by it), the
-- line's time and its detail (the line without at), as far as the lines already kept and these leave room: a line once kept stays,
-- and a line past either bound is dropped with every line after it. Two writes of one run's
-- lines at once (an activation that lost its lease and the next) may each see the room the
-- other takes: the bound is then passed by at most one write's lines, which the engine bounds
-- too.
--
-- A set-returning SQL function is inlined into the statement that calls it, and so planned
-- with it, only when it is STABLE, a single SELECT, and called without WITH ORDINALITY (the
-- place is a column for that reason): one that is not is planned again at every call, which
-- cost a 1-step run's end a third more Postgres CPU than the lines themselves.
CREATE FUNCTION guest_log_rows(run uuid, lines jsonb, max_lines bigint, max_bytes bigint)
RETURNS TABLE (line_ord bigint, line_at timestamptz, line_detail jsonb) LANGUAGE sql STABLE AS $$
    WITH used AS (
        SELECT count(*) AS n, coalesce(sum(octet_length(l.detail ->> 'message')), 0) AS bytes
        FROM run_log l WHERE l.run_id = run AND l.kind = 'guest' AND lines IS NOT NULL
    ), numbered AS (
        SELECT e, ord, sum(octet_length(e ->> 'message')) OVER (ORDER BY ord) AS upto
        FROM jsonb_array_elements(lines) WITH ORDINALITY AS t(e, ord)
    )
    SELECT numbered.ord, (numbered.e ->> 'at')::timestamptz, numbered.e - 'at'
    FROM used, numbered
    WHERE used.n + numbered.ord <= max_lines AND used.bytes + numbered.upto <= max_bytes
    ORDER BY numbered.ord
$$;
