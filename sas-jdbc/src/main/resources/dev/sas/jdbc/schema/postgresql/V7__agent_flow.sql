-- SAS schema version 7: agent flow control shared by every runtime. One row per agent endpoint
-- (a gate) holds its circuit breaker, rate limiter and queue of held-back calls; it is locked for
-- each change, so limits hold across nodes. Each call in flight holds a leased permit row, renewed
-- while the call runs, so a node that dies gives its permits back within the lease. Independent of
-- other versions: only IF [NOT] EXISTS statements, on tables and indexes of its own or the claim's.
CREATE TABLE IF NOT EXISTS ${prefix}agent_gate (
    gate                 VARCHAR(255) NOT NULL PRIMARY KEY,
    breaker_state        VARCHAR(16)  NOT NULL,
    breaker_since        BIGINT       NOT NULL,
    open_until           BIGINT       NOT NULL,
    window_start         BIGINT       NOT NULL,
    window_calls         INT          NOT NULL,
    window_failures      INT          NOT NULL,
    consecutive_failures INT          NOT NULL,
    probe_successes      INT          NOT NULL,
    rate_next_us         BIGINT       NOT NULL,
    wait_next_us         BIGINT       NOT NULL,
    held_until           BIGINT       NOT NULL,
    avg_hold_ms          BIGINT       NOT NULL,
    last_failure         VARCHAR(500),
    updated_at           BIGINT       NOT NULL
);
CREATE TABLE IF NOT EXISTS ${prefix}agent_permit (
    permit_id   VARCHAR(64)  NOT NULL PRIMARY KEY,
    gate        VARCHAR(255) NOT NULL,
    holder      VARCHAR(200) NOT NULL,
    probe       BOOLEAN      NOT NULL,
    acquired_at BIGINT       NOT NULL,
    expires_at  BIGINT       NOT NULL
);
CREATE INDEX IF NOT EXISTS ${prefix}agent_permit_gate_idx ON ${prefix}agent_permit (gate, expires_at);
-- A task whose agent call was held back waits in state WAITING and is claimed like a PENDING one:
-- the partial claim index now holds WAITING rows too (the claim's predicate names all three states).
CREATE INDEX IF NOT EXISTS ${prefix}task_claim_wait_idx ON ${prefix}task (priority DESC, next_attempt_at)
    WHERE locked_by IS NULL AND state IN ('PENDING', 'COMPENSATING', 'WAITING');
DROP INDEX IF EXISTS ${prefix}task_claim_idx;
-- A WAITING task made due again (a permit came free, a breaker closed) is work too: the wake-up
-- hint of V6 covers it.
DROP TRIGGER IF EXISTS ${prefix}task_due ON ${prefix}task;
CREATE TRIGGER ${prefix}task_due AFTER UPDATE ON ${prefix}task FOR EACH ROW
    WHEN (NEW.locked_by IS NULL AND NEW.state IN ('PENDING', 'COMPENSATING', 'WAITING')
        AND (OLD.locked_by IS NOT NULL OR OLD.state IS DISTINCT FROM NEW.state
             OR OLD.next_attempt_at IS DISTINCT FROM NEW.next_attempt_at OR (NEW.awaited AND NOT OLD.awaited)))
    EXECUTE FUNCTION ${prefix}notify_due();
