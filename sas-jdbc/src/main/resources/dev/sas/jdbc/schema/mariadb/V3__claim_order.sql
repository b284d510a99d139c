-- SAS schema version 3: the claim's order served by an index. A claim reads one state at a time
-- (PENDING, then COMPENSATING) in (priority DESC, next_attempt_at) order straight from this index,
-- so its cost no longer grows with the number of due tasks (before: "Using filesort" over every
-- due row). Descending index columns need MariaDB 10.8 or later; older versions sort as before.
CREATE INDEX IF NOT EXISTS ${prefix}task_claim_order_idx ON ${prefix}task (state, priority DESC, next_attempt_at);
DROP INDEX IF EXISTS ${prefix}task_claim_idx ON ${prefix}task;
