-- SAS schema version 12: fewer indexes on the task row, each of which every state change rewrites.
-- Purging finished tasks reads (state, created_at), since a task is created before it is last
-- updated, so the purge index is gone.
DROP INDEX IF EXISTS ${prefix}task_purge_idx ON ${prefix}task;
