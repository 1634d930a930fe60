-- Purpose: the BankPay enrollment read model (started, bank_account_added,
-- failed, closed), one row per enrollment stream. Rebuildable from ledger.events.
CREATE TABLE ledger.enrollments (
    enrollment_ref text        PRIMARY KEY,
    phase          text        NOT NULL,
    updated_at     timestamptz NOT NULL,
    last_position  bigint      NOT NULL,
    state          jsonb       NOT NULL
);

GRANT SELECT, INSERT, UPDATE ON ledger.enrollments TO ledger_service;
