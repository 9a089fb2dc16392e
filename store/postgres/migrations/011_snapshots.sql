-- Durable snapshots (issue 13): a run's latest snapshot of its guest, from which a later
-- activation goes on instead of replaying the journal from the top. One per run, replaced by
-- each new one in the fenced commit of the journal entry before it (save_snapshot.sql); a claim
-- loads it with the journal entries from seq on (load_journals.sql). Finishing, cancelling or
-- moving a run to new code deletes it; a swept run takes it with it. data is opaque here
-- (sealed by the engine). Like steps, a row carries its run's tenant and has no key to tenants.
CREATE TABLE snapshots (
    run_id     uuid PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    tenant_id  text NOT NULL,
    seq        integer NOT NULL CHECK (seq >= 0),
    last_key   text NOT NULL,
    code       text NOT NULL,
    data       bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
