-- SAS schema version 5: tasks the supervisor parked because no live runtime has registered their
-- workflow version. Only PARKED rows are in this index, so it costs the hot path nothing; it
-- serves the per-version probe that makes them due again. Parking itself reads due rows through
-- the claim index.
CREATE INDEX IF NOT EXISTS ${prefix}task_parked_idx ON ${prefix}task (workflow, workflow_version)
    WHERE state = 'PARKED';
