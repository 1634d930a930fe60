import Foundation
import LedgerCore
import LedgerPostgres

/// Filters of `GET /v1/orders`, already validated.
package struct OrderFilter: Sendable {
    package var status: Int?
    package var paid: Bool?
    package var attention: Bool?
    package var provider: String?
    package var updatedFrom: Timestamp?
    package var updatedTo: Timestamp?
    package var q: String?
    package var limit: Int = 50
    package var cursor: OrderCursor?

    package init() {}
}

/// Keyset position in the newest-update-first list: opaque to clients.
package struct OrderCursor: Sendable, Equatable {
    package var updatedAt: Int64
    package var merchantOrderNo: String

    package var encoded: String {
        Data("\(updatedAt):\(merchantOrderNo)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package init(updatedAt: Int64, merchantOrderNo: String) {
        self.updatedAt = updatedAt
        self.merchantOrderNo = merchantOrderNo
    }

    package init?(encoded: String) {
        var b64 = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard encoded.count <= 200, let data = Data(base64Encoded: b64), let text = String(data: data, encoding: .utf8),
              let colon = text.firstIndex(of: ":"), let micros = Int64(text[..<colon]) else { return nil }
        let no = String(text[text.index(after: colon)...])
        guard MerchantOrderNo.isStoredForm(no) else { return nil }   // a page may end at a legacy "." order
        self.init(updatedAt: micros, merchantOrderNo: no)
    }
}

/// Read use cases for support staff and auditors.
package struct OrderQueries: Sendable {
    package let pool: ConnectionPool
    package let orders = OrderReadModel()
    package let store = EventStore()

    /// The response body of `GET /v1/orders/{no}`: the stored document, or (for a row
    /// without a current one) the same rendering derived from the stored state.
    package func orderDocument(_ no: MerchantOrderNo, masked: Bool) throws -> [UInt8] {
        let found = try pool.withConnection { c -> [UInt8]? in
            switch try orders.document(no, masked: masked, on: c) {
            case .body(let body): return body
            case .missing: return nil
            case .stale: return try orders.load(no, on: c).map { OrderDocuments($0.0).body(masked: masked) }
            }
        }
        guard let found else { throw ServiceError.notFound("no order \(no.value)") }
        return found
    }

    /// The state as the ledger knew it at `asOf` (events recorded at or before it).
    package func order(_ no: MerchantOrderNo, asOf: Timestamp) throws -> JSONValue {
        let events = try history(no)
        let known = events.filter { $0.recorded.recordedAt <= asOf }
        guard !known.isEmpty else { throw ServiceError.notFound("order \(no.value) was not known at \(asOf.rfc3339)") }
        return Lifecycle.state(no, events.map(\.recorded), asOf: asOf).toJSON()
    }

    /// Every event of an order, oldest first, with its canonical form.
    package func history(_ no: MerchantOrderNo) throws -> [(stored: StoredEvent, recorded: RecordedEvent)] {
        let stored = try pool.withConnection { try store.read(stream: no.stream, on: $0) }
        return try stored.map { ($0, try EventMapping.recorded($0)) }
    }

    /// The timeline: each event with the status after it.
    package func timeline(_ no: MerchantOrderNo, includeRaw: Bool) throws -> JSONValue {
        let events = try history(no)
        guard !events.isEmpty else { throw ServiceError.notFound("no order \(no.value)") }
        let statuses = Lifecycle.statusAfter(no, events.map(\.recorded))
        let redeliveries = try pool.withConnection { c in
            try c.query("SELECT position, count FROM ledger.redeliveries WHERE position = ANY($1::bigint[])",
                        [.text("{" + events.map { String($0.stored.position) }.joined(separator: ",") + "}")])
        }
        var redeliveryCount: [Int64: Int64] = [:]
        for r in 0..<redeliveries.count { redeliveryCount[try redeliveries.int64(r, "position")] = try redeliveries.int64(r, "count") }
        let items: [JSONValue] = try events.enumerated().map { i, e in
            let metadata = try JSONValue.parse(stored: e.stored.metadataJSON)
            var fields: [(String, JSONValue)] = [
                ("position", .integer(e.stored.position)),
                ("eventId", .string(e.stored.eventID)),
                ("type", .string(e.stored.type)),
                ("source", .string(e.stored.source)),
                ("provider", .string(e.recorded.event.provider)),
                ("recordedAt", .string(e.stored.recordedAt.rfc3339)),
                ("observedAt", .string(e.stored.observedAt.rfc3339)),
                ("verified", .bool(metadata["verifiedBy"]?.stringValue == "signature")),
                ("verifiedBy", metadata["verifiedBy"] ?? .null),
                ("payload", try JSONValue.parse(stored: e.stored.payloadJSON)),
                ("statusAfter", .integer(statuses[i].status.rawValue)),
                ("redeliveries", .integer(redeliveryCount[e.stored.position] ?? 0)),
            ]
            if includeRaw {
                fields.append(("raw", e.stored.raw.map { .string(Data($0).base64EncodedString()) } ?? .null))
                fields.append(("metadata", metadata))
                fields.append(("hash", .string(Hex.encode(e.stored.hash))))
            }
            return .object(fields)
        }
        return .object([("merchantOrderNo", .string(no.value)), ("events", .array(items))])
    }

    /// Newest update first, keyset-paginated: `{orders: [...], nextCursor}` as response bytes.
    /// Each order is its stored document (see `OrderReadModel.document`), or, for a row
    /// without a current one, the same rendering derived from its state.
    package func list(_ f: OrderFilter, masked: Bool) throws -> [UInt8] {
        func time(_ t: Timestamp?) -> SQLValue { t.map { .text(String($0.microseconds)) } ?? .null }
        let document = masked ? "coalesce(document_masked, document)" : "document"
        let result = try pool.withConnection { c in
            try c.query("""
                SELECT CASE WHEN document_version = $11::smallint THEN \(document) END AS document,
                       CASE WHEN document_version = $11::smallint THEN NULL ELSE state::text END AS state,
                       ledger.micros(updated_at) AS updated_us, merchant_order_no
                  FROM ledger.orders
                 WHERE ($1::smallint IS NULL OR status = $1)
                   AND ($2::boolean IS NULL OR paid = $2)
                   AND ($3::boolean IS NULL OR attention = $3)
                   AND ($4::text IS NULL OR provider = $4)
                   AND ($5::bigint IS NULL OR updated_at >= ledger.from_micros($5))
                   AND ($6::bigint IS NULL OR updated_at < ledger.from_micros($6))
                   AND ($7::text IS NULL OR merchant_order_no = $7 OR provider_order_id = $7
                        OR tx_hash = $7 OR external_customer_id = $7)
                   AND ($8::bigint IS NULL OR (updated_at, merchant_order_no) < (ledger.from_micros($8), $9::text))
                 ORDER BY updated_at DESC, merchant_order_no DESC
                 LIMIT $10
                """, [f.status.map { .int(Int64($0)) } ?? .null, f.paid.map { .bool($0) } ?? .null,
                      f.attention.map { .bool($0) } ?? .null, .optional(f.provider),
                      time(f.updatedFrom), time(f.updatedTo), .optional(f.q),
                      f.cursor.map { .int($0.updatedAt) } ?? .null, .optional(f.cursor?.merchantOrderNo),
                      .int(Int64(f.limit + 1)), .int(Int64(OrderDocuments.version))])
        }
        // The same bytes JSONSerializer writes for {"orders":[...],"nextCursor":...}: the
        // documents are its output, and masking the whole equals masking each order (the
        // keys and the cursor, base64url, hold no "@" or "%40").
        var body = Array(#"{"orders":["#.utf8)
        var next: JSONValue = .null
        for r in 0..<result.count {
            if r == f.limit {
                let last = r - 1
                next = .string(OrderCursor(updatedAt: try result.int64(last, "updated_us"),
                                           merchantOrderNo: try result.string(last, "merchant_order_no")).encoded)
                break
            }
            if r > 0 { body.append(UInt8(ascii: ",")) }
            if let stored = try result.value(r, "document") {
                body.append(contentsOf: stored.utf8)
            } else {
                let state = try OrderState(storage: JSONValue.parse(stored: try result.string(r, "state")))
                body.append(contentsOf: OrderDocuments(state).body(masked: masked))
            }
        }
        body.append(contentsOf: #"],"nextCursor":"#.utf8)
        JSONSerializer.write(next, to: &body)
        body.append(UInt8(ascii: "}"))
        return body
    }

    package func head() throws -> JSONValue {
        let (position, hash) = try pool.withConnection { try store.head(on: $0) }
        return .object([("position", .integer(position)), ("hash", .string(Hex.encode(hash)))])
    }
}
