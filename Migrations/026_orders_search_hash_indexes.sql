-- Purpose: cheaper order rows. Two lookup indexes of the list's `q` filter
-- (`provider_order_id = $q OR tx_hash = $q`, exact matches only) become hash
-- indexes. A btree insert descends three levels comparing long keys (a
-- 66-character tx hash, a provider's order id) and splits pages at random
-- places; a hash index stores a 4-byte hash and the row's address in the bucket
-- the hash picks. The list reads them the same way (a bitmap scan of each,
-- OR-ed), and nothing orders or ranges by these columns. Measured on 80,000 rows
-- of random keys: the two indexes cost 5.6 µs a row as btrees and 1.9 µs as hash
-- indexes (the whole insert 8.1 -> 4.4 µs). Every new order, and every update
-- that is not HOT, writes to them.
-- `external_customer_id` keeps its btree: one customer has many orders, and a
-- hash index keeps all of a repeated key in one bucket's chain of pages, where a
-- btree deduplicates it.
-- The new indexes are built first under other names (writes to ledger.orders
-- wait meanwhile, reads do not); dropping the old ones takes the table's
-- exclusive lock, which then lasts only until this transaction commits.
CREATE INDEX orders_provider_order_id_hash ON ledger.orders USING hash (provider_order_id)
    WHERE provider_order_id IS NOT NULL;
CREATE INDEX orders_tx_hash_hash ON ledger.orders USING hash (tx_hash) WHERE tx_hash IS NOT NULL;
DROP INDEX ledger.orders_provider_order_id;
DROP INDEX ledger.orders_tx_hash;
ALTER INDEX ledger.orders_provider_order_id_hash RENAME TO orders_provider_order_id;
ALTER INDEX ledger.orders_tx_hash_hash RENAME TO orders_tx_hash;
