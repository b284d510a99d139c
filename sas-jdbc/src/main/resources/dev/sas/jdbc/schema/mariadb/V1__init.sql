-- SAS schema version 1 for MariaDB 10.6+ and MySQL 8. ${prefix} is replaced by the configured
-- table prefix. Every instant is BIGINT epoch milliseconds (UTC), so neither the server's nor the
-- JVM's time zone matters; durations are BIGINT milliseconds. utf8mb4_bin makes business keys
-- case-sensitive, as in every other store.
CREATE TABLE IF NOT EXISTS ${prefix}task (
    task_id           VARCHAR(64)  NOT NULL PRIMARY KEY,
    workflow          VARCHAR(128) NOT NULL,
    workflow_version  INT          NOT NULL,
    business_key      VARCHAR(255) NOT NULL,
    state             VARCHAR(32)  NOT NULL,
    priority          INT          NOT NULL,
    locked_by         VARCHAR(200),
    claim_token       VARCHAR(64),
    lease             BIGINT       NOT NULL,
    complete_by       BIGINT,
    next_attempt_at   BIGINT,
    failure_count     INT          NOT NULL,
    current_step      INT          NOT NULL,
    current_step_name VARCHAR(200),
    attempt           INT          NOT NULL,
    step_timeout_ms   BIGINT       NOT NULL,
    cancel_requested  BOOLEAN      NOT NULL,
    created_at        BIGINT       NOT NULL,
    updated_at        BIGINT       NOT NULL,
    input             MEDIUMTEXT   NOT NULL,
    reply_to          VARCHAR(255),
    last_error        MEDIUMTEXT,
    UNIQUE KEY ${prefix}task_business_key_uk (workflow, business_key),
    -- claim: due rows; terminal rows have next_attempt_at NULL
    KEY ${prefix}task_claim_idx (state, next_attempt_at),
    -- expired scan: only locked rows have complete_by set
    KEY ${prefix}task_expired_idx (complete_by),
    KEY ${prefix}task_list_idx (state, created_at),
    KEY ${prefix}task_purge_idx (state, updated_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS ${prefix}step (
    task_id            VARCHAR(64) NOT NULL,
    step_index         INT         NOT NULL,
    step_name          VARCHAR(200),
    state              VARCHAR(32),
    attempts           INT         NOT NULL,
    output             MEDIUMTEXT,
    error              MEDIUMTEXT,
    started_at         BIGINT,
    finished_at        BIGINT,
    compensation_state VARCHAR(32),
    PRIMARY KEY (task_id, step_index)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS ${prefix}event (
    id         BIGINT      NOT NULL AUTO_INCREMENT PRIMARY KEY,
    task_id    VARCHAR(64) NOT NULL,
    type       VARCHAR(32) NOT NULL,
    step_index INT         NOT NULL,
    step_name  VARCHAR(200),
    attempt    INT         NOT NULL,
    at         BIGINT      NOT NULL,
    message    MEDIUMTEXT,
    KEY ${prefix}event_task_idx (task_id, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS ${prefix}supervisor_lease (
    name       VARCHAR(64) NOT NULL PRIMARY KEY,
    holder     VARCHAR(200),
    expires_at BIGINT      NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
INSERT IGNORE INTO ${prefix}supervisor_lease (name, holder, expires_at) VALUES ('supervisor', NULL, 0);
