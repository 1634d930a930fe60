-- Purpose: where each log follower (projection, export job) has read up to.
CREATE TABLE ledger.checkpoints (
    name       text        PRIMARY KEY,
    position   bigint      NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

GRANT SELECT, INSERT, UPDATE ON ledger.checkpoints TO ledger_service;
