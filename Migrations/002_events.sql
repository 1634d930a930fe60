-- Purpose: the append-only event log. One row per event, never updated or deleted.
-- `position` is the global order (gapless, assigned under one lock, so commit
-- order equals position order). `hash` chains every event to the one before it.
CREATE TABLE ledger.events (
    position        bigint      PRIMARY KEY,
    event_id        uuid        NOT NULL UNIQUE,
    stream          text        NOT NULL,
    stream_version  integer     NOT NULL CHECK (stream_version > 0),
    type            text        NOT NULL,
    source          text        NOT NULL CHECK (source IN ('webhook', 'query', 'operator', 'client', 'system')),
    payload         jsonb       NOT NULL,
    raw             bytea,                    -- the bytes as received, where there were any
    metadata        jsonb       NOT NULL DEFAULT '{}'::jsonb,  -- request id, verification verdict, signing key id
    idempotency_key text        NOT NULL,
    recorded_at     timestamptz NOT NULL,
    observed_at     timestamptz NOT NULL,
    hash            bytea       NOT NULL CHECK (octet_length(hash) = 32),
    CONSTRAINT events_idempotency_key_unique UNIQUE (idempotency_key),
    CONSTRAINT events_stream_version_unique UNIQUE (stream, stream_version)
);

CREATE INDEX events_recorded_at ON ledger.events (recorded_at);

COMMENT ON TABLE ledger.events IS 'Append-only, hash-chained event log. UPDATE, DELETE and TRUNCATE fail for every role.';

GRANT SELECT, INSERT ON ledger.events TO ledger_service;
