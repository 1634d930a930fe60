import Foundation

/// The SQL for the pgbench baselines, written by `ledger-bench pgbench-scripts`
/// so pgbench inserts exactly the row width the append benchmark appends.
///
/// Two shapes of table. The baselines are the tables a team would write for
/// itself to keep webhooks (`webhook_events`: an identity key, a unique
/// idempotency key, a unique (stream, stream_version), rows as wide as a ledger
/// event) and its orders (`team_orders`: the order number as key, a status, a
/// version counter, the order's document as wide as the ledger's):
/// - plain_insert.sql: a new webhook, one INSERT (as a new-order webhook);
/// - plain_existing.sql: a webhook for an order that exists: in one transaction,
///   the order's row updated (status, version + 1, updated_at) and the event
///   inserted at that version;
/// - plain_new_order.sql: a new order: its row and its first event inserted;
/// - plain_select.sql: an order read by its number.
/// For reference, the ledger's own shapes (`bench_events`, column for column
/// ledger.events with its five indexes; `bench_orders` as ledger.orders):
/// - insert.sql: one single-row INSERT transaction with a fresh key;
/// - select.sql: one select-by-primary-key of an order row.
enum PgbenchScripts {
    static func write(to directory: String, orders: Int) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try setup(orders: orders).write(toFile: directory + "/setup.sql", atomically: true, encoding: .utf8)
        try insert().write(toFile: directory + "/insert.sql", atomically: true, encoding: .utf8)
        try select(orders: orders).write(toFile: directory + "/select.sql", atomically: true, encoding: .utf8)
        try plainInsert().write(toFile: directory + "/plain_insert.sql", atomically: true, encoding: .utf8)
        try plainExisting(orders: orders).write(toFile: directory + "/plain_existing.sql", atomically: true, encoding: .utf8)
        try plainNewOrder().write(toFile: directory + "/plain_new_order.sql", atomically: true, encoding: .utf8)
        try plainSelect(orders: orders).write(toFile: directory + "/plain_select.sql", atomically: true, encoding: .utf8)
    }

    /// The team's own tables, seeded with `orders` orders (each with its first event).
    static func plainSetup(orders: Int) -> String {
        let sample = EventSample.newEvent(run: "00000000", thread: 0, n: 0)
        let raw = String(decoding: sample.raw ?? [], as: UTF8.self)
        // The event's payload and metadata in one jsonb (a team keeps what it was sent).
        let payload = quoted(String(sample.payloadJSON.dropLast()) + ",\"meta\":" + sample.metadataJSON + "}")
        return """
            DROP TABLE IF EXISTS webhook_events;
            DROP TABLE IF EXISTS team_orders;
            CREATE TABLE webhook_events (
                id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                idempotency_key text        NOT NULL UNIQUE,
                stream          text        NOT NULL,
                stream_version  int         NOT NULL,
                payload         jsonb       NOT NULL,
                raw             bytea,
                received_at     timestamptz NOT NULL DEFAULT now(),
                UNIQUE (stream, stream_version)
            );
            CREATE TABLE team_orders (
                merchant_order_no text        PRIMARY KEY,
                status            smallint    NOT NULL,
                version           int         NOT NULL,
                updated_at        timestamptz NOT NULL,
                document          jsonb       NOT NULL
            );
            INSERT INTO team_orders SELECT 'T-' || i, 2, 1, now(), \(quoted(EventSample.orderStateJSON()))::jsonb
              FROM generate_series(1, \(orders)) AS i;
            INSERT INTO webhook_events (idempotency_key, stream, stream_version, payload, raw)
            SELECT 'web3:seed-' || i, 'order-T-' || i, 1, \(payload)::jsonb, convert_to(\(quoted(raw)), 'UTF8')
              FROM generate_series(1, \(orders)) AS i;
            VACUUM ANALYZE team_orders, webhook_events;

            """
    }

    /// The event row of the plain table, stream and version given as SQL expressions.
    private static func plainEventInsert(stream: String, version: String) -> String {
        let sample = EventSample.newEvent(run: "00000000", thread: 0, n: 0)
        let raw = String(decoding: sample.raw ?? [], as: UTF8.self)
        let payload = quoted(String(sample.payloadJSON.dropLast()) + ",\"meta\":" + sample.metadataJSON + "}")
        return "INSERT INTO webhook_events (idempotency_key, stream, stream_version, payload, raw) SELECT 'web3:' || k, \(stream), \(version), \(payload)::jsonb, convert_to(\(quoted(raw)), 'UTF8') FROM (SELECT encode(sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'hex') AS k) AS fresh;"
    }

    static func plainInsert() -> String {
        plainEventInsert(stream: "'order-B-' || left(k, 16)", version: "1") + "\n"
    }

    static func plainExisting(orders: Int) -> String {
        """
        \\set k random(1, \(orders))
        BEGIN;
        UPDATE team_orders SET status = 3, version = version + 1, updated_at = now() WHERE merchant_order_no = 'T-' || :k RETURNING version
        \\gset
        \(plainEventInsert(stream: "'order-T-' || :k", version: ":version"))
        END;

        """
    }

    static func plainNewOrder() -> String {
        """
        BEGIN;
        \(plainEventInsert(stream: "'order-N-' || left(k, 16)", version: "1"))
        INSERT INTO team_orders VALUES ('N-' || encode(sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'hex'), 1, 1, now(), \(quoted(EventSample.orderStateJSON()))::jsonb);
        END;

        """
    }

    static func plainSelect(orders: Int) -> String {
        """
        \\set k random(1, \(orders))
        SELECT * FROM team_orders WHERE merchant_order_no = 'T-' || :k;

        """
    }

    static func setup(orders: Int) -> String {
        let state = quoted(EventSample.orderStateJSON())
        return """
            DROP TABLE IF EXISTS bench_events;
            DROP TABLE IF EXISTS bench_orders;
            -- ledger.events, column for column, with the same unique constraints, indexes (BRIN on recorded_at, as 017),
            -- collations (021) and statistics targets (024).
            CREATE TABLE bench_events (
                position        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                event_id        uuid        NOT NULL UNIQUE DEFAULT gen_random_uuid(),
                stream          text        COLLATE "C" NOT NULL,
                stream_version  integer     NOT NULL CHECK (stream_version > 0),
                type            text        NOT NULL,
                source          text        NOT NULL,
                payload         jsonb       NOT NULL,
                raw             bytea,
                metadata        jsonb       NOT NULL DEFAULT '{}'::jsonb,
                idempotency_key text        COLLATE "C" NOT NULL UNIQUE,
                recorded_at     timestamptz NOT NULL,
                observed_at     timestamptz NOT NULL,
                hash            bytea       NOT NULL CHECK (octet_length(hash) = 32),
                UNIQUE (stream, stream_version)
            );
            CREATE INDEX ON bench_events USING brin (recorded_at);
            -- No planner statistics on the opaque columns, as 024.
            ALTER TABLE bench_events ALTER COLUMN payload SET STATISTICS 0, ALTER COLUMN raw SET STATISTICS 0,
                ALTER COLUMN metadata SET STATISTICS 0, ALTER COLUMN hash SET STATISTICS 0;
            -- ledger.orders, column for column (the read model).
            CREATE TABLE bench_orders (
                merchant_order_no text COLLATE "C" PRIMARY KEY, provider text, status smallint NOT NULL, status_name text NOT NULL,
                paid boolean NOT NULL, attention boolean NOT NULL, late_payment boolean NOT NULL, refunded boolean NOT NULL,
                expected_amount text, paid_amount text, asset text, fiat_currency text, fiat_amount text,
                provider_order_id text COLLATE "C", tx_hash text COLLATE "C", external_customer_id text COLLATE "C", created_at timestamptz,
                updated_at timestamptz NOT NULL, paid_at timestamptz, paid_recorded_at timestamptz,
                event_count integer NOT NULL, last_position bigint NOT NULL, state text NOT NULL
            );
            INSERT INTO bench_orders
            SELECT 'B-bench-' || i, 'web3', 2, 'confirming', false, false, false, false, NULL, NULL, 'USDT', NULL, NULL,
                   'P' || lpad(i::text, 24, '0'), '0x' || encode(sha256(i::text::bytea), 'hex'), NULL, now(), now(), NULL, NULL,
                   1, i, \(state)
              FROM generate_series(1, \(orders)) AS i;
            CREATE INDEX ON bench_orders (updated_at, merchant_order_no);
            CREATE INDEX ON bench_orders USING hash (tx_hash);   -- as 026
            ALTER TABLE bench_orders ALTER COLUMN state SET STATISTICS 0;
            VACUUM ANALYZE bench_orders;

            """ + plainSetup(orders: orders)
    }

    /// One event-sized row a transaction: same payload, raw, metadata and key
    /// widths as `EventSample.newEvent`, a fresh 69-character key every time.
    static func insert() -> String {
        let sample = EventSample.newEvent(run: "00000000", thread: 0, n: 0)
        let raw = String(decoding: sample.raw ?? [], as: UTF8.self)
        return """
            INSERT INTO bench_events (stream, stream_version, type, source, payload, raw, metadata, idempotency_key, recorded_at, observed_at, hash) SELECT 'order-B-' || left(k, 16), 1, 'StatusObserved', 'webhook', \(quoted(sample.payloadJSON))::jsonb, convert_to(\(quoted(raw)), 'UTF8'), \(quoted(sample.metadataJSON))::jsonb, 'web3:' || k, now(), now(), sha256(convert_to(k, 'UTF8')) FROM (SELECT encode(sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'hex') AS k) AS fresh;

            """
    }

    static func select(orders: Int) -> String {
        """
        \\set k random(1, \(orders))
        SELECT * FROM bench_orders WHERE merchant_order_no = 'B-bench-' || :k;

        """
    }

    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
