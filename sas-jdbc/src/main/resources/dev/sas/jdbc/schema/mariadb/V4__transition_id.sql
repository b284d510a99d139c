-- SAS schema version 4: the id of the last transition applied to each task, so that a replayed
-- write (its commit acknowledgement was lost) is recognised as applied and never applied twice.
ALTER TABLE ${prefix}task ADD COLUMN IF NOT EXISTS last_transition BIGINT;
