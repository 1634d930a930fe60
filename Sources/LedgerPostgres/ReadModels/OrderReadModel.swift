import Foundation
import LedgerCore

/// The response documents of one order, rendered once when its state is saved
/// (Migrations/014_order_documents.sql) so reads need not derive them again.
package struct OrderDocuments: Equatable, Sendable {
    /// Bump whenever the rendering changes (`OrderState.toJSON`, `EmailMasking`, the
    /// serializer): stored documents of another version are then ignored and derived
    /// from the state until the order is written again or `ledger rebuild` runs.
    package static let version = 3   // 2: EmailMasking masks non-ASCII, quoted and dotless addresses; 3: and non-ASCII or literal domains

    /// The read model's JSON, as an auditor sees it.
    package var document: [UInt8]
    /// The same with e-mail addresses masked, or nil when masking changes nothing.
    package var masked: [UInt8]?

    /// Documents as stored (`masked` nil when it would equal `document`).
    package init(document: [UInt8], masked: [UInt8]?) {
        self.document = document
        self.masked = masked
    }

    package init(_ state: OrderState) {
        document = state.documentBytes()
        masked = Self.mayHoldEmail(document) ? JSONSerializer.bytes(EmailMasking.mask(state.toJSON())) : nil
        if masked == document { masked = nil }
    }

    /// The body for a reader who sees masked (or unmasked) e-mail addresses.
    package func body(masked wantsMasked: Bool) -> [UInt8] { wantsMasked ? (masked ?? document) : document }

    /// False when `json` (serialized) holds neither "@" nor "%40", the marks EmailMasking
    /// looks for in every string and key: then masking its value would change nothing.
    package static func mayHoldEmail(_ json: [UInt8]) -> Bool {
        json.withUnsafeBytes { b in
            guard let base = b.baseAddress, b.count > 0 else { return false }
            if memchr(base, Int32(UInt8(ascii: "@")), b.count) != nil { return true }
            // Each "%", then the two bytes after it (memchr: a document is scanned for every order saved or checked).
            var from = 0
            while from < b.count, let found = memchr(base + from, Int32(UInt8(ascii: "%")), b.count - from) {
                let i = base.distance(to: UnsafeRawPointer(found))
                if i + 2 < b.count, b[i + 1] == UInt8(ascii: "4"), b[i + 2] == UInt8(ascii: "0") { return true }
                from = i + 1
            }
            return false
        }
    }
}

/// One order as `ledger.orders` stores it: the state, the export period key, and
/// what is rendered from the state.
/// A class: a batch's rows pass through a few collections on the writer's path,
/// and one reference is cheaper to copy than a whole state.
package final class OrderRow: Sendable {
    package let state: OrderState
    package let paidRecordedAt: Timestamp?
    package let documents: OrderDocuments
    /// The storage form (`OrderState.storageJSON`) as JSON text.
    package let stateText: [UInt8]

    package init(_ model: (OrderState, Timestamp?)) {
        state = model.0
        paidRecordedAt = model.1
        documents = OrderDocuments(model.0)
        stateText = model.0.storageBytes()
    }
}

/// SQL for `ledger.orders`: load one state, save one state.
package struct OrderReadModel: Sendable {
    /// The table that `loadMany`, `insertNew` and `saveMany` work on: `ledger.orders`, or
    /// the table a rebuild fills before it takes its place (`ShadowTables`).
    package let table: String
    private let copySQL: String
    private let upsertSQL: String

    package init() {
        table = "ledger.orders"
        copySQL = Self.copyNewSQL
        upsertSQL = Self.saveManySQL
    }

    /// Writes go to `table` (a trusted name, never input); with `freeze`, new rows are
    /// copied in frozen (the table must have been created in the same transaction).
    package init(table: String, freeze: Bool = false) {
        self.table = table
        copySQL = Self.copyNewSQL(into: table, freeze: freeze)
        upsertSQL = Self.saveManySQL(into: table)
    }

    /// What a read of one order's stored document found.
    package enum StoredDocument: Equatable {
        /// The response body, ready to send.
        case body([UInt8])
        /// The row exists but holds no current document (written before migration 014, or
        /// by another rendering version): derive it from the state.
        case stale
        case missing
    }

    /// The stored response document of one order: one indexed select, prepared once per
    /// connection, whose text is sent as it is.
    package func document(_ no: MerchantOrderNo, masked: Bool, on c: PostgresConnection) throws -> StoredDocument {
        let row = try c.firstRow(masked ? Self.maskedDocumentSQL : Self.documentSQL,
                                 [.text(no.value), .int(Int64(OrderDocuments.version))], prepared: true)
        guard let row else { return .missing }
        guard let first = row.first, let body = first else { return .stale }
        return .body(body)
    }

    /// The stored documents of many orders in one indexed select: for each order found,
    /// its document and masked document, or nils when they are stale (see `document`).
    package func documents(_ numbers: [String], on c: PostgresConnection) throws -> [String: (document: [UInt8]?, masked: [UInt8]?)] {
        var keys = BinaryArray(.text)
        for no in numbers { keys.append(text: no) }
        let rows = try c.rawRows(Self.documentsSQL, [keys.parameter, .int(Int64(OrderDocuments.version))], prepared: true)
        var found: [String: (document: [UInt8]?, masked: [UInt8]?)] = [:]
        for row in rows where row.count == 3 {
            guard let no = row[0] else { continue }
            found[String(decoding: no, as: UTF8.self)] = (row[1], row[2])
        }
        return found
    }

    package static let documentsSQL = """
        SELECT merchant_order_no,
               CASE WHEN document_version = $2::smallint THEN document END,
               CASE WHEN document_version = $2::smallint THEN coalesce(document_masked, document) END
          FROM ledger.orders WHERE merchant_order_no = ANY($1::text[])
        """

    package static let documentSQL = """
        SELECT CASE WHEN document_version = $2::smallint THEN document END
          FROM ledger.orders WHERE merchant_order_no = $1
        """
    package static let maskedDocumentSQL = """
        SELECT CASE WHEN document_version = $2::smallint THEN coalesce(document_masked, document) END
          FROM ledger.orders WHERE merchant_order_no = $1
        """

    /// The stored state and the export period key, or nil for a new order.
    package func load(_ no: MerchantOrderNo, forUpdate: Bool = false, on c: PostgresConnection) throws -> (OrderState, Timestamp?)? {
        let result = try c.query("""
            SELECT state::text AS state, ledger.micros(paid_recorded_at) AS paid_recorded_us
              FROM ledger.orders WHERE merchant_order_no = $1
            """ + (forUpdate ? " FOR UPDATE" : ""), [.text(no.value)])
        guard result.count == 1 else { return nil }
        let state = try OrderState(storage: JSONValue.parse(stored: try result.string(0, "state")))
        let paidRecorded = try result.value(0, "paid_recorded_us").flatMap(Int64.init).map(Timestamp.init(microseconds:))
        return (state, paidRecorded)
    }

    /// The read-model JSON of one order, or nil.
    package func json(_ no: MerchantOrderNo, on c: PostgresConnection) throws -> JSONValue? {
        try load(no, on: c).map { $0.0.toJSON() }
    }

    /// Many orders' stored states at once, locked for update (one round trip).
    package func loadMany(_ numbers: [MerchantOrderNo], on c: PostgresConnection) throws -> [String: (OrderState, Timestamp?)] {
        if numbers.isEmpty { return [:] }
        // Order numbers are [A-Za-z0-9._:-]: safe inside a quoted array element.
        let array = "{" + numbers.map { "\"" + $0.value + "\"" }.joined(separator: ",") + "}"
        let result = try c.query("""
            SELECT merchant_order_no, state::text AS state, ledger.micros(paid_recorded_at) AS paid_recorded_us
              FROM \(table) WHERE merchant_order_no = ANY($1::text[])
             ORDER BY merchant_order_no
               FOR UPDATE
            """, [.text(array)])
        var out: [String: (OrderState, Timestamp?)] = [:]
        for r in 0..<result.count {
            let state = try OrderState(storage: JSONValue.parse(stored: try result.string(r, "state")))
            let paid = try result.value(r, "paid_recorded_us").flatMap(Int64.init).map(Timestamp.init(microseconds:))
            out[try result.string(r, "merchant_order_no")] = (state, paid)
        }
        return out
    }

    package func save(_ s: OrderState, paidRecordedAt: Timestamp?, on c: PostgresConnection) throws {
        try saveMany([(s, paidRecordedAt)], on: c)
    }

    /// Upserts many orders in one statement. The rows travel column by column as
    /// binary arrays (`BinaryArray`): nothing is rendered as text to be parsed
    /// again (the state is JSON text; migration 020).
    /// With `deferred`, inside a transaction, the statement goes out with its COMMIT
    /// (`deferUntilCommit`).
    package func saveMany(_ states: [(OrderState, Timestamp?)], deferred: Bool = false, on c: PostgresConnection) throws {
        try saveMany(Self.render(states), deferred: deferred, on: c)
    }

    /// Stores the rows of orders that have no row yet (their stream started in this
    /// transaction) with one binary COPY: no conflict check, and no arrays to unnest
    /// (for a batch of 100 new orders, PostgreSQL took 1.6 ms through the upsert's
    /// unnest and 1.2-1.4 ms through COPY). Fails, like any INSERT, on a row that does
    /// exist. Unlike `saveMany` it cannot wait for COMMIT: it runs at once.
    ///
    /// `duty`: when paced, a COPY of its own for each piece of about 32 KB (20-odd rows),
    /// each stored before the next is made, with the thread's pause after it. PostgreSQL's
    /// work on a piece is then part of the burst it follows, and paced with it: one COPY
    /// streamed in pieces ran ahead of PostgreSQL, which then worked through the backlog
    /// (up to megabytes) for tens of milliseconds at a stretch.
    package func insertNew(_ rows: [OrderRow], duty: DutyCycle? = nil, on c: PostgresConnection) throws {
        if rows.isEmpty { return }
        guard let duty, duty.isPaced else { return try copy(rows[...], on: c) }
        var start = rows.startIndex
        var size = 0
        for index in rows.indices {
            size += Self.copySizeEstimate(rows[index])
            if size >= Self.pacedPieceBytes || index == rows.index(before: rows.endIndex) {
                try copy(rows[start...index], on: c)
                duty.step()
                start = rows.index(after: index)
                size = 0
            }
        }
    }

    /// Input a paced COPY holds (`insertNew`).
    static let pacedPieceBytes = 32 << 10

    /// About how many bytes a row takes in the COPY's input: its state and documents, which
    /// are most of it.
    static func copySizeEstimate(_ row: OrderRow) -> Int {
        200 + row.stateText.count + row.documents.document.count + (row.documents.masked?.count ?? 0)
    }

    /// One binary COPY of `rows`.
    private func copy(_ rows: ArraySlice<OrderRow>, on c: PostgresConnection) throws {
        let copied = try c.copyIn(copySQL) { send in
            var copy = BinaryCopyRows(capacity: rows.count * 1_600)
            for row in rows { Self.appendCopyRow(row, to: &copy) }
            try send(copy.finish())
        }
        guard copied == rows.count else {
            throw PostgresError.unexpectedResult("COPY stored \(copied) orders of \(rows.count)")
        }
    }

    /// One row of `copyNewSQL`'s input.
    private static func appendCopyRow(_ row: OrderRow, to copy: inout BinaryCopyRows) {
        let s = row.state
        copy.startRow(fields: 26)
        copy.append(text: s.merchantOrderNo.value)
        copy.append(text: s.provider)
        copy.append(int16: Int16(s.status.rawValue))
        copy.append(text: s.statusName)
        copy.append(bool: s.paid)
        copy.append(bool: s.attention)
        copy.append(bool: s.latePayment)
        copy.append(bool: s.refunded)
        copy.append(text: s.expectedAmount)
        copy.append(text: s.paidAmount)
        copy.append(text: s.asset)
        copy.append(text: s.fiatCurrency)
        copy.append(text: s.fiatAmount)
        copy.append(text: s.providerOrderId)
        copy.append(text: s.txHash)
        copy.append(text: s.externalCustomerId)
        copy.append(timestamp: s.createdAt)
        copy.append(timestamp: s.updatedAt ?? Timestamp.now())
        copy.append(timestamp: s.paidAt)
        copy.append(timestamp: row.paidRecordedAt)
        copy.append(int32: Int32(truncatingIfNeeded: s.eventCount))
        copy.append(int64: s.lastPosition ?? 0)
        copy.append(utf8: row.stateText)
        copy.append(utf8: row.documents.document)
        copy.append(utf8: row.documents.masked)
        copy.append(int16: Int16(OrderDocuments.version))
    }

    package static let copyNewSQL = copyNewSQL(into: "ledger.orders", freeze: false)

    package static func copyNewSQL(into table: String, freeze: Bool) -> String {
        """
        COPY \(table) (merchant_order_no, provider, status, status_name, paid, attention, late_payment, refunded,
                            expected_amount, paid_amount, asset, fiat_currency, fiat_amount, provider_order_id, tx_hash,
                            external_customer_id, created_at, updated_at, paid_at, paid_recorded_at,
                            event_count, last_position, state, document, document_masked, document_version)
        FROM STDIN (FORMAT binary\(freeze ? ", FREEZE" : ""))
        """
    }

    /// Upserts rows already rendered (`render`).
    package func saveMany(_ rows: [OrderRow], deferred: Bool = false, on c: PostgresConnection) throws {
        if rows.isEmpty { return }
        let n = rows.count
        var no = BinaryArray(.text), provider = BinaryArray(.text), status = BinaryArray(.int16)
        var statusName = BinaryArray(.text), paid = BinaryArray(.bool), attention = BinaryArray(.bool)
        var latePayment = BinaryArray(.bool), refunded = BinaryArray(.bool), expectedAmount = BinaryArray(.text)
        var paidAmount = BinaryArray(.text), asset = BinaryArray(.text), fiatCurrency = BinaryArray(.text)
        var fiatAmount = BinaryArray(.text), providerOrderId = BinaryArray(.text), txHash = BinaryArray(.text)
        var externalCustomerId = BinaryArray(.text), createdAt = BinaryArray(.timestamptz)
        var updatedAt = BinaryArray(.timestamptz), paidAt = BinaryArray(.timestamptz)
        var paidRecordedAt = BinaryArray(.timestamptz), eventCount = BinaryArray(.int32)
        var lastPosition = BinaryArray(.int64), state = BinaryArray(.text, capacity: n * 1024)
        var document = BinaryArray(.text, capacity: n * 1024), documentMasked = BinaryArray(.text)
        for row in rows {
            let (s, paidRecorded, documents, stateText) = (row.state, row.paidRecordedAt, row.documents, row.stateText)
            no.append(text: s.merchantOrderNo.value)
            provider.append(text: s.provider)
            status.append(Int64(s.status.rawValue))
            statusName.append(text: s.statusName)
            paid.append(s.paid)
            attention.append(s.attention)
            latePayment.append(s.latePayment)
            refunded.append(s.refunded)
            expectedAmount.append(text: s.expectedAmount)
            paidAmount.append(text: s.paidAmount)
            asset.append(text: s.asset)
            fiatCurrency.append(text: s.fiatCurrency)
            fiatAmount.append(text: s.fiatAmount)
            providerOrderId.append(text: s.providerOrderId)
            txHash.append(text: s.txHash)
            externalCustomerId.append(text: s.externalCustomerId)
            createdAt.append(s.createdAt)
            updatedAt.append(s.updatedAt ?? Timestamp.now())
            paidAt.append(s.paidAt)
            paidRecordedAt.append(paidRecorded)
            eventCount.append(Int64(s.eventCount))
            lastPosition.append(s.lastPosition ?? 0)
            state.append(utf8: stateText)
            document.append(utf8: documents.document)
            documentMasked.append(utf8: documents.masked)
        }
        let columns = [no, provider, status, statusName, paid, attention, latePayment, refunded, expectedAmount,
                       paidAmount, asset, fiatCurrency, fiatAmount, providerOrderId, txHash, externalCustomerId,
                       createdAt, updatedAt, paidAt, paidRecordedAt, eventCount, lastPosition, state, document,
                       documentMasked]
        // Prepared once per connection: planned once, not at every commit. Safe as a
        // generic plan: the rows come from the parameters, the conflict from the key.
        let parameters = columns.map(\.parameter) + [.int(Int64(OrderDocuments.version))]
        if deferred {
            try c.deferUntilCommit(upsertSQL, parameters, prepared: true)
        } else {
            try c.query(upsertSQL, parameters, prepared: true)
        }
    }

    /// Each order's row as it is saved: its documents and storage text. This is most
    /// of a save's CPU; a large batch is split across the cores.
    package static func render(_ models: [(OrderState, Timestamp?)]) -> [OrderRow] {
        let chunks = min(Self.processors, models.count / 16)
        guard chunks > 1 else { return models.map(OrderRow.init) }
        var out = [OrderRow?](repeating: nil, count: models.count)
        out.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let slots = buffer   // each chunk writes its own indices only
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                for index in stride(from: chunk, to: models.count, by: chunks) { slots[index] = OrderRow(models[index]) }
            }
        }
        return out.map { $0! }
    }

    /// Read once: Foundation reads the cgroup's CPU files on every call, and this runs per batch.
    package static let processors = ProcessInfo.processInfo.activeProcessorCount

    package static let saveManySQL = saveManySQL(into: "ledger.orders")

    package static func saveManySQL(into table: String) -> String {
        """
        INSERT INTO \(table) AS o (
            merchant_order_no, provider, status, status_name, paid, attention, late_payment, refunded,
            expected_amount, paid_amount, asset, fiat_currency, fiat_amount, provider_order_id, tx_hash,
            external_customer_id, created_at, updated_at, paid_at, paid_recorded_at,
            event_count, last_position, state, document, document_masked, document_version)
        SELECT r.*, $26::smallint
          FROM unnest($1::text[], $2::text[], $3::smallint[], $4::text[], $5::boolean[], $6::boolean[],
                      $7::boolean[], $8::boolean[], $9::text[], $10::text[], $11::text[], $12::text[],
                      $13::text[], $14::text[], $15::text[], $16::text[], $17::timestamptz[],
                      $18::timestamptz[], $19::timestamptz[], $20::timestamptz[], $21::integer[],
                      $22::bigint[], $23::text[], $24::text[], $25::text[]) AS r
        ON CONFLICT (merchant_order_no) DO UPDATE SET
            provider = excluded.provider, status = excluded.status, status_name = excluded.status_name,
            paid = excluded.paid, attention = excluded.attention, late_payment = excluded.late_payment,
            refunded = excluded.refunded, expected_amount = excluded.expected_amount,
            paid_amount = excluded.paid_amount, asset = excluded.asset, fiat_currency = excluded.fiat_currency,
            fiat_amount = excluded.fiat_amount, provider_order_id = excluded.provider_order_id,
            tx_hash = excluded.tx_hash, external_customer_id = excluded.external_customer_id,
            created_at = excluded.created_at, updated_at = excluded.updated_at, paid_at = excluded.paid_at,
            paid_recorded_at = excluded.paid_recorded_at, event_count = excluded.event_count,
            last_position = excluded.last_position, state = excluded.state, document = excluded.document,
            document_masked = excluded.document_masked, document_version = excluded.document_version
        """
    }
}

/// SQL for `ledger.enrollments`. Enrollment state is small and rebuilt by
/// replaying its stream, then saved for reading.
package struct EnrollmentReadModel: Sendable {
    /// `ledger.enrollments`, or the table a rebuild fills (`ShadowTables`).
    package let table: String

    package init(table: String = "ledger.enrollments") { self.table = table }

    package func save(_ s: EnrollmentState, on c: PostgresConnection) throws {
        try c.query("""
            INSERT INTO \(table) AS e (enrollment_ref, phase, updated_at, last_position, state)
            VALUES ($1, $2, ledger.from_micros($3), $4, $5::jsonb)
            ON CONFLICT (enrollment_ref) DO UPDATE SET phase = excluded.phase, updated_at = excluded.updated_at,
                last_position = excluded.last_position, state = excluded.state
            """, [.text(s.enrollmentRef), .text(s.phase.rawValue),
                  .text(String((s.updatedAt ?? Timestamp.now()).microseconds)), .int(s.lastPosition ?? 0),
                  .text(JSONSerializer.string(s.toJSON()))])
    }
}
