-- SAS schema version 17: stored names that say what they are (0.3). The state of a task whose step
-- awaits its completion (an outside completion, an agent's reply, child tasks, a durable timer) is
-- AWAITING_COMPLETION, no longer AWAITING_REPLY, and its pseudo-holder sas:awaiting-completion, no
-- longer sas:awaiting-reply; the events REPLY_AWAITED and REPLY_RECEIVED are COMPLETION_AWAITED and
-- COMPLETION_RECEIVED, in the event table (an event packed into then_type or before_type too) and in
-- status messages not yet delivered. Rewrites stored values only; no table, column or index changes,
-- and no index names these states. Idempotent. Every node of an older build must be stopped first:
-- it cannot read the new values. Each table is read once (the event table has no index on type).
UPDATE ${prefix}task
    SET state = CASE WHEN state = 'AWAITING_REPLY' THEN 'AWAITING_COMPLETION' ELSE state END,
        locked_by = CASE WHEN locked_by = 'sas:awaiting-reply' THEN 'sas:awaiting-completion' ELSE locked_by END
    WHERE state = 'AWAITING_REPLY' OR locked_by = 'sas:awaiting-reply';
UPDATE ${prefix}event
    SET type = CASE type WHEN 'REPLY_AWAITED' THEN 'COMPLETION_AWAITED'
            WHEN 'REPLY_RECEIVED' THEN 'COMPLETION_RECEIVED' ELSE type END,
        then_type = CASE then_type WHEN 'REPLY_AWAITED' THEN 'COMPLETION_AWAITED'
            WHEN 'REPLY_RECEIVED' THEN 'COMPLETION_RECEIVED' ELSE then_type END,
        before_type = CASE before_type WHEN 'REPLY_AWAITED' THEN 'COMPLETION_AWAITED'
            WHEN 'REPLY_RECEIVED' THEN 'COMPLETION_RECEIVED' ELSE before_type END
    WHERE type IN ('REPLY_AWAITED', 'REPLY_RECEIVED') OR then_type IN ('REPLY_AWAITED', 'REPLY_RECEIVED')
        OR before_type IN ('REPLY_AWAITED', 'REPLY_RECEIVED');
UPDATE ${prefix}reply_outbox
    SET type = CASE type WHEN 'REPLY_AWAITED' THEN 'COMPLETION_AWAITED' ELSE 'COMPLETION_RECEIVED' END
    WHERE type IN ('REPLY_AWAITED', 'REPLY_RECEIVED');
