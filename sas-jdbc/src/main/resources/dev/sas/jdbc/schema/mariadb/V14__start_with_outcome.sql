-- SAS schema version 14: a claim's start event is written with the attempt's outcome. A claim no
-- longer inserts a STEP_STARTED (or COMPENSATION_STARTED) event row: it sets pending_start_at to
-- its time, and the event is read back from the task row (its state, current step and attempt)
-- while the attempt runs. The next change of the task that writes events (the attempt's
-- transition, a supervisor's recovery, a cancel request) writes it, in the before_* columns of its
-- first event row, and clears pending_start_at. A one-step task so writes one event row.
ALTER TABLE ${prefix}task ADD COLUMN IF NOT EXISTS pending_start_at BIGINT;
ALTER TABLE ${prefix}event ADD COLUMN IF NOT EXISTS before_type VARCHAR(32);
ALTER TABLE ${prefix}event ADD COLUMN IF NOT EXISTS before_step_index INT;
ALTER TABLE ${prefix}event ADD COLUMN IF NOT EXISTS before_step_name VARCHAR(200);
ALTER TABLE ${prefix}event ADD COLUMN IF NOT EXISTS before_attempt INT;
ALTER TABLE ${prefix}event ADD COLUMN IF NOT EXISTS before_at BIGINT;
