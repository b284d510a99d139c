-- SAS schema version 13: tasks started at submit. A runtime with room inserts a task its own client
-- submits already claimed by it; started_step then holds the first step's name, and the task's
-- STEP_STARTED event (step 0, attempt 1, at created_at) is read back from the task row, as its
-- RECEIVED event is, instead of being written as an event row. Null for every other task.
ALTER TABLE ${prefix}task ADD COLUMN IF NOT EXISTS started_step VARCHAR(200);
