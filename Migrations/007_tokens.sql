-- Purpose: bearer tokens. Only a SHA-256 of each token is stored, never the token.
-- A client token is scoped to one order (order_no) and always expires.
CREATE TABLE ledger.tokens (
    name        text        PRIMARY KEY,
    role        text        NOT NULL CHECK (role IN ('ingest', 'support', 'auditor', 'accountant', 'client')),
    token_hash  bytea       NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    order_no    text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz,
    revoked_at  timestamptz,
    CHECK ((role = 'client') = (order_no IS NOT NULL)),
    CHECK (role <> 'client' OR expires_at IS NOT NULL)
);

GRANT SELECT, INSERT, UPDATE ON ledger.tokens TO ledger_service;
