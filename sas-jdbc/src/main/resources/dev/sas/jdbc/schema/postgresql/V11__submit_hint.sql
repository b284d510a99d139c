-- SAS schema version 11: a submit's "work is due" hint is sent by the store itself, at most one
-- per 2 ms per store (JdbcStore's Submits), instead of by a trigger on every submit transaction: a
-- NOTIFY serialises the commits of the transactions that send one, and one per submit cost about
-- half of the single-submit path. Releases and resubmits keep their trigger (task_due).
DROP TRIGGER IF EXISTS ${prefix}task_submitted ON ${prefix}task;
DROP FUNCTION IF EXISTS ${prefix}notify_submitted();
