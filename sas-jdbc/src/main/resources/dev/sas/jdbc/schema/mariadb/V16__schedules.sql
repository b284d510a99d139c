-- SAS schema version 16: recurring schedules, shared by every runtime. One row per schedule: its
-- definition (the task it submits, its cron expression or interval, its missed-fire policy), whether
-- it is paused, and the last fire time decided (submitted or skipped by the policy). The active
-- supervisor submits each later fire time's task under the business key <name>@<fire time>, which
-- the task table keeps unique per workflow, then moves last_fire_at on by compare-and-set: exactly
-- once per fire time rests on that key, not on this row. Independent of other versions.
CREATE TABLE IF NOT EXISTS ${prefix}schedule (
    name                  VARCHAR(100) NOT NULL PRIMARY KEY,
    workflow              VARCHAR(128) NOT NULL,
    workflow_version      INT          NOT NULL,
    input                 MEDIUMTEXT   NOT NULL,
    priority              INT          NOT NULL,
    first_step            VARCHAR(200) NOT NULL,
    first_step_timeout_ms BIGINT       NOT NULL,
    fire_trigger          VARCHAR(500) NOT NULL,
    cron_zone             VARCHAR(64),
    missed_fires          VARCHAR(32)  NOT NULL,
    paused                BOOLEAN      NOT NULL,
    last_fire_at          BIGINT       NOT NULL,
    registered_at         BIGINT       NOT NULL,
    updated_at            BIGINT       NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
