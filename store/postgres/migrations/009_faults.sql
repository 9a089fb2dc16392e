-- Faults: a run's activations in a row that ended in a fault without journal progress (a
-- hand-back after a store error, or a lease that ran out), and the last one's reason. Any
-- journal write resets them; the engine fails a run whose count reaches its bound, so that no
-- run is re-activated forever. Neither column is indexed: updating them keeps the runs row's
-- updates heap-only.
ALTER TABLE runs ADD COLUMN faults integer NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN last_fault text;
