-- SAS schema version 7: agent flow control shared by every runtime. One row per agent endpoint
-- (a gate) holds its circuit breaker, rate limiter and queue of held-back calls; it is locked for
-- each change, so limits hold across nodes. Each call in flight holds a leased permit row, renewed
-- while the call runs, so a node that dies gives its permits back within the lease. A task held
-- back waits in state WAITING, which the claim reads through the (state, priority, next_attempt_at)
-- index like the other claimable states. Independent of other versions.
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
