-- Purpose: deliveries whose signature did not verify. They are not events:
-- they are kept here byte for byte, with secrets redacted from the headers,
-- so an operator can see what was refused and why.
CREATE TABLE ledger.quarantine (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    received_at    timestamptz NOT NULL DEFAULT now(),
    provider       text        NOT NULL,
    path           text        NOT NULL,
    remote_address text        NOT NULL,
    reason         text        NOT NULL,   -- bad_signature, stale_timestamp, missing_signature, ...
    detail         text        NOT NULL,
    request_id     text        NOT NULL,
    headers        jsonb       NOT NULL,   -- signature values and credentials replaced by "[redacted]"
    raw            bytea       NOT NULL
);

CREATE INDEX quarantine_received_at ON ledger.quarantine (received_at);

GRANT SELECT, INSERT ON ledger.quarantine TO ledger_service;
