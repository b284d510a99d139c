-- SAS schema version 2: the workflow versions each live runtime has registered, renewed on its
-- supervisor interval, so the supervisor can tell tasks no live runtime claims.
CREATE TABLE IF NOT EXISTS ${prefix}runtime_workflow (
    instance_id      VARCHAR(200) NOT NULL,
    workflow         VARCHAR(128) NOT NULL,
    workflow_version INT          NOT NULL,
    expires_at       BIGINT       NOT NULL,
    PRIMARY KEY (instance_id, workflow, workflow_version)
);
