-- Purpose: the `ledger` schema, and the least-privileged role the service runs as.
-- The service role may read and append events but never rewrite them.
CREATE SCHEMA IF NOT EXISTS ledger;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ledger_service') THEN
        CREATE ROLE ledger_service LOGIN;
    END IF;
END
$$;

GRANT USAGE ON SCHEMA ledger TO ledger_service;
