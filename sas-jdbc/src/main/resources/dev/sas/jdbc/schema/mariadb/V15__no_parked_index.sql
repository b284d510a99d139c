-- SAS schema version 15: the parked index goes. It led with the state, so every state change of every
-- task rewrote an entry in it (dropping it saved 3-16 % of the server's CPU per task in A/B drains), to serve
-- queries that run at most once a minute on the active supervisor and only read much when tasks of
-- a workflow version no live runtime registers are due: they now read the claim index, which also
-- leads with the state (PARKED rows for unparking, due PENDING rows for parking).
DROP INDEX IF EXISTS ${prefix}task_parked_idx ON ${prefix}task;
