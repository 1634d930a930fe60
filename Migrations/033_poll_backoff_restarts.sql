-- Purpose: the poller's backoff starts again when an order's status changes.
--
-- A row remembers the order's status as of the last pass that looked at it. A pass
-- that finds the order at another status (a webhook moved it to confirming, say, or
-- the last poll did) sets its attempts back to 0 and brings its next poll forward to
-- at most the first delay (30 s) away. Without it, an order that started confirming
-- after an hour of "still awaiting" answers would wait out a 30-minute backoff before
-- the poller asked again, and a lost "paid" webhook would be learned that much later.
ALTER TABLE ledger.polls ADD COLUMN status_seen smallint;
COMMENT ON COLUMN ledger.polls.status_seen IS 'The order''s status when a pass last enrolled or looked at this row; a pass that finds another restarts the backoff.';
