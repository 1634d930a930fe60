-- Purpose: count redeliveries (an append whose idempotency key already exists).
-- The event itself is never touched; this side table keeps the tally.
CREATE TABLE ledger.redeliveries (
    position     bigint      PRIMARY KEY REFERENCES ledger.events (position),
    count        bigint      NOT NULL,
    last_seen_at timestamptz NOT NULL
);

GRANT SELECT, INSERT, UPDATE ON ledger.redeliveries TO ledger_service;
