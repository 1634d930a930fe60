-- Purpose: let the service role read which migrations are applied, so
-- /readyz can report "migrations current" when the service runs as
-- ledger_service (as Ops/run does).
GRANT SELECT ON ledger.schema_migrations TO ledger_service;
