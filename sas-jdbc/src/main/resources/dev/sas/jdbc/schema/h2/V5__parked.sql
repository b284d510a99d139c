-- SAS schema version 5: parking tasks no live runtime can run, and making them due again, read
-- only the rows of one state and workflow version (due ones, for parking) through this index.
CREATE INDEX IF NOT EXISTS ${prefix}task_parked_idx ON ${prefix}task (state, workflow, workflow_version,
    next_attempt_at);
