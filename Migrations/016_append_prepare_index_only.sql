-- Purpose: ledger.append_prepare must probe ledger.events by index, always.
-- PL/pgSQL keeps a generic plan for its queries; planned while the log was
-- small (a new ledger), that plan scans the whole log for the batch's keys
-- and streams, and it stays after the log has grown: one full scan per
-- commit. Turning sequential scans off for this function's own statements
-- leaves the planner only the index probes that its queries are written for.
ALTER FUNCTION ledger.append_prepare(text[], text[]) SET enable_seqscan = off;
