-- Purpose: cheaper index work on identifiers. Idempotency keys, stream names,
-- order numbers and provider references are identifiers, compared byte for
-- byte, never sorted for people. Under the database's default collation
-- (a libc locale such as C.UTF-8) every btree comparison of them went through
-- strcoll; under "C" it is a memcmp. Under a C.UTF-8 default collation (the
-- project's clusters) ASCII identifiers order the same either way, so keyset
-- pagination over merchant_order_no pages exactly as before; under another
-- locale (en_US, say) the order changes, and a cursor taken before this
-- migration may skip or repeat rows once. The indexes on these columns are
-- rebuilt; the tables are not rewritten. A type change drops the columns'
-- planner statistics, and an append-only log waits long for autovacuum to
-- gather them again: both tables are analyzed here.
ALTER TABLE ledger.events
    ALTER COLUMN idempotency_key TYPE text COLLATE "C",
    ALTER COLUMN stream TYPE text COLLATE "C";
ALTER TABLE ledger.orders
    ALTER COLUMN merchant_order_no TYPE text COLLATE "C",
    ALTER COLUMN provider_order_id TYPE text COLLATE "C",
    ALTER COLUMN tx_hash TYPE text COLLATE "C",
    ALTER COLUMN external_customer_id TYPE text COLLATE "C";
ANALYZE ledger.events;
ANALYZE ledger.orders;
