-- SAS schema version 9: replies to steps that await one (awaitReply). One row per answered attempt
-- (task, step, lease): a second reply to the same attempt is a duplicate. A reply that arrives while
-- the request is still being sent (the task still PROCESSING under the same lease) is kept here and
-- applied by the transition that would have made the task await it. Deleted with its task.
-- Tasks that await a reply keep locked_by (the pseudo-holder 'sas:awaiting-reply') and complete_by,
-- so the expired scan finds them through task_expired_idx, unchanged.
CREATE TABLE IF NOT EXISTS ${prefix}step_reply (
    task_id     VARCHAR(64) NOT NULL,
    step_index  INT         NOT NULL,
    lease       BIGINT      NOT NULL,
    outcome     VARCHAR(32) NOT NULL,
    payload     TEXT,
    received_at BIGINT      NOT NULL,
    PRIMARY KEY (task_id, step_index, lease)
);
