-- Purpose: the order read model, one row per order, kept in the same
-- transaction as the events it reflects (so a 2xx write is readable at once).
-- `state` holds the reducer's full state; the other columns are copies of its
-- fields for querying, filtering and export. Rebuildable from ledger.events.
CREATE TABLE ledger.orders (
    merchant_order_no    text        PRIMARY KEY,
    provider             text,
    status               smallint    NOT NULL CHECK (status BETWEEN 1 AND 6),
    status_name          text        NOT NULL,
    paid                 boolean     NOT NULL,
    attention            boolean     NOT NULL,
    late_payment         boolean     NOT NULL,
    refunded             boolean     NOT NULL,
    expected_amount      text,
    paid_amount          text,
    asset                text,
    fiat_currency        text,
    fiat_amount          text,
    provider_order_id    text,
    tx_hash              text,
    external_customer_id text,
    created_at           timestamptz,
    updated_at           timestamptz NOT NULL,
    paid_at              timestamptz,
    -- when the ledger recorded the first paid observation: the export period key
    paid_recorded_at     timestamptz,
    event_count          integer     NOT NULL,
    last_position        bigint      NOT NULL,
    state                jsonb       NOT NULL
);

CREATE INDEX orders_updated ON ledger.orders (updated_at DESC, merchant_order_no DESC);
CREATE INDEX orders_provider_order_id ON ledger.orders (provider_order_id) WHERE provider_order_id IS NOT NULL;
CREATE INDEX orders_tx_hash ON ledger.orders (tx_hash) WHERE tx_hash IS NOT NULL;
CREATE INDEX orders_external_customer_id ON ledger.orders (external_customer_id) WHERE external_customer_id IS NOT NULL;
CREATE INDEX orders_paid_recorded_at ON ledger.orders (paid_recorded_at) WHERE paid_recorded_at IS NOT NULL;

GRANT SELECT, INSERT, UPDATE ON ledger.orders TO ledger_service;

-- Microseconds since the epoch back to a timestamp (NULL stays NULL).
CREATE FUNCTION ledger.from_micros(us bigint) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN us IS NULL THEN NULL ELSE 'epoch'::timestamptz + (us || ' microseconds')::interval END
$$;
