-- Purpose: cheaper inserts into the list's index. `orders_updated` serves
-- "newest update first" (ORDER BY updated_at DESC, merchant_order_no DESC)
-- and its keyset cursor. Built descending, every new or updated order went to
-- its leftmost leaf: a full descent each time and even page splits there.
-- Ascending, new entries land on the rightmost leaf, where PostgreSQL inserts
-- without a descent and splits pages unevenly in favour of the growing edge;
-- the list reads the same index backwards, which a btree does as cheaply.
-- Measured on 200,000 rows of increasing times: 0.4 µs less a row to insert
-- (table and index, 434 -> 357 ms), and the index 13 MB instead of 23 MB.
-- (Built inside the migration's transaction: writes to ledger.orders wait
-- while it builds.)
DROP INDEX ledger.orders_updated;
CREATE INDEX orders_updated ON ledger.orders (updated_at, merchant_order_no);
