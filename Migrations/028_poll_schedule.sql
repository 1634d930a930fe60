-- Purpose: the web3 poller's schedule (operations.md: `ledger poll --once` and
-- `ledger serve`). Operational state, not history: what a poll observed is an
-- event in ledger.events; when to ask the gateway next is kept here. A row lives
-- while its order can still be changed by a poll, and is deleted after.
CREATE TABLE ledger.polls (
    merchant_order_no text COLLATE "C" PRIMARY KEY,
    next_poll_at      timestamptz NOT NULL,
    attempts          integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_polled_at    timestamptz,
    -- Why the last poll gave no observation (the gateway's answer or the transport
    -- error, the key redacted).
    last_error        text
);

-- Passes read the due rows, oldest first.
CREATE INDEX polls_next_poll_at ON ledger.polls (next_poll_at);

GRANT SELECT, INSERT, UPDATE, DELETE ON ledger.polls TO ledger_service;
