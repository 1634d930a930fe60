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

-- The rows already scheduled start from their order's status now: an upgrade restarts
-- no backoff by itself.
UPDATE ledger.polls p SET status_seen = o.status FROM ledger.orders o WHERE o.merchant_order_no = p.merchant_order_no;

-- A claimed row's lease, apart from its next poll time: a restart leaves a leased row's
-- time alone (another poller must not take it while it is being asked about), and the
-- poller that holds it then schedules it from the restarted attempts.
ALTER TABLE ledger.polls ADD COLUMN leased_until timestamptz;
COMMENT ON COLUMN ledger.polls.leased_until IS 'Until when a poller holds the row it claimed; null once it rescheduled or released it.';
