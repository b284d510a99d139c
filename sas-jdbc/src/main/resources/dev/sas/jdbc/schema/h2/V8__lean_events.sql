-- SAS schema version 8: lean event rows. Two events of one transition at the same instant, the
-- second without a message (a step completed and the next one started, or the task ended), share
-- one row: the second is kept in the then_* columns and read back as its own event. A task's
-- RECEIVED event is no longer written: it is read from the task row (created_at). On H2 a new
-- schema gets these columns from V1; IF EXISTS keeps a racing instance from failing on a table
-- another instance's V1 has not made visible yet.
ALTER TABLE IF EXISTS ${prefix}event ADD COLUMN IF NOT EXISTS then_type VARCHAR(32);
ALTER TABLE IF EXISTS ${prefix}event ADD COLUMN IF NOT EXISTS then_step_index INT;
ALTER TABLE IF EXISTS ${prefix}event ADD COLUMN IF NOT EXISTS then_step_name VARCHAR(200);
ALTER TABLE IF EXISTS ${prefix}event ADD COLUMN IF NOT EXISTS then_attempt INT;
