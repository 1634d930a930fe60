-- Purpose: lets the service's writer prove, in the same commit, that the order states
-- it remembers (OrderStateCache) were folded against the ledger.orders that is live.
--
-- The writer keeps the states it committed last and folds an order's next event into
-- its remembered state instead of loading the row. `ledger rebuild` swaps in a new
-- ledger.orders (a new table, so a new OID) under the append lock; a state remembered
-- from before the swap may then disagree with the new row (the old one was edited by
-- hand, say), and writing the next event from it would carry the old row's fields into
-- the new table. A commit whose rows were folded from remembered states sends this
-- check with its COMMIT: when the table is not the one the states were folded against,
-- it fails with SQLSTATE LG001, the transaction rolls back, and the writer forgets what
-- it remembered and writes the batch again from the rows of the new table.
--
-- 'ledger.orders'::regclass looks the name up in the catalog; it takes no lock on the
-- table, and the writer holds the append lock, which the swap takes first.
CREATE FUNCTION ledger.orders_table_is(expected oid) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF 'ledger.orders'::regclass::oid IS DISTINCT FROM expected THEN
        RAISE EXCEPTION 'ledger.orders is not the table the writer''s remembered order states were folded against: a rebuild swapped it in'
            USING ERRCODE = 'LG001';
    END IF;
END
$$;
COMMENT ON FUNCTION ledger.orders_table_is(oid) IS 'Raises LG001 unless ledger.orders is the table of the given OID (the writer''s check that its remembered states are of the live table).';
GRANT EXECUTE ON FUNCTION ledger.orders_table_is(oid) TO ledger_service;
