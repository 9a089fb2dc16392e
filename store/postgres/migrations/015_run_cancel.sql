-- A cancel the workflow can handle (issue 14, point 4): when it was asked, and until when the
-- workflow may compensate before it is terminated.
ALTER TABLE runs ADD COLUMN cancel_requested_at timestamptz;
ALTER TABLE runs ADD COLUMN cancel_grace_until timestamptz;
