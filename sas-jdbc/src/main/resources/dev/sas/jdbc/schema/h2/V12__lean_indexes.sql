-- SAS schema version 12: fewer indexes on the task row, each of which every state change rewrites.
-- The claim reads its rows back by primary key (task_id IN the candidates, with the claim token),
-- so claim_token needs no index; purging finished tasks reads (state, created_at), since a task is
-- created before it is last updated, so the purge index is gone too.
DROP INDEX IF EXISTS ${prefix}task_claim_token_idx;
DROP INDEX IF EXISTS ${prefix}task_purge_idx;
