-- Purpose: ledger.from_micros and ledger.micros are plain arithmetic on their
-- argument, so they are marked PARALLEL SAFE. Functions are PARALLEL UNSAFE
-- unless declared otherwise, and one unsafe call anywhere in a query keeps
-- PostgreSQL from planning parallel workers for any of it: the orders export,
-- whose period bounds go through ledger.from_micros, read and sorted a year of
-- orders on one backend where the same query with safe functions sorts in
-- parallel workers (on 200,000 orders, 0.98 s against 0.57 s of execution).
ALTER FUNCTION ledger.from_micros(bigint) PARALLEL SAFE;
ALTER FUNCTION ledger.micros(timestamp with time zone) PARALLEL SAFE;
