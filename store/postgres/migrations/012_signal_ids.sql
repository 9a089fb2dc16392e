-- Signal ids (issue 14): a signal sent to one run may carry an id, and sending it again is
-- acknowledged without delivering the event twice. One row per (run, id), written in the
-- signal's own statement (signal.sql) with what became of the first sending; a swept run takes
-- its ids with it.
CREATE TABLE signal_ids (
    run_id    uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    signal_id text NOT NULL,
    delivered boolean NOT NULL,
    PRIMARY KEY (run_id, signal_id)
);
