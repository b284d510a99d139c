-- SAS schema version 6: reply channels that reach the submitter. Every event of a task submitted
-- with a reply channel is also written here, in the transaction of its transition; the node that
-- consumes the channel reads the oldest rows, delivers them and deletes them. A message exists
-- exactly when its transition committed, and one whose transaction committed after a
-- higher-numbered one is still read (nothing is skipped, unlike a cursor over ids).
CREATE TABLE IF NOT EXISTS ${prefix}reply_outbox (
    id           BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    channel      VARCHAR(255) NOT NULL,
    task_id      VARCHAR(64)  NOT NULL,
    business_key VARCHAR(255),
    workflow     VARCHAR(128),
    type         VARCHAR(32)  NOT NULL,
    step_index   INT          NOT NULL,
    step_name    VARCHAR(200),
    attempt      INT          NOT NULL,
    at           BIGINT       NOT NULL,
    message      MEDIUMTEXT,
    KEY ${prefix}reply_outbox_channel_idx (channel, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
-- one row per registered channel: who consumes it (a lease) and its position (the last delivery
-- id acknowledged, and how many were)
CREATE TABLE IF NOT EXISTS ${prefix}reply_channel (
    channel          VARCHAR(255) NOT NULL PRIMARY KEY,
    holder           VARCHAR(200),
    expires_at       BIGINT       NOT NULL,
    last_delivery_id BIGINT       NOT NULL,
    delivered        BIGINT       NOT NULL,
    registered_at    BIGINT       NOT NULL,
    acknowledged_at  BIGINT
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
