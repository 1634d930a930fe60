-- Purpose: cheaper appends, the same queries served. ledger.events is written
-- in recorded_at order (times are taken under the append lock), which is the
-- case BRIN exists for: a block-range index a few pages long that serves
-- "events recorded in this period" as well as the btree did, at almost no cost
-- per insert. The btree cost every append an insert into a large index.
DROP INDEX ledger.events_recorded_at;
CREATE INDEX events_recorded_at_brin ON ledger.events USING brin (recorded_at);
