import Foundation
import LedgerCore

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

    /// The update times a cursor can carry: years 1 to 9999, microseconds from 1970 (a page
    /// ends at a stored time; beyond these PostgreSQL could not even make one of it).
    static let timeRange: ClosedRange<Int64> = -62_135_596_800_000_000 ... 253_402_300_799_999_999

    package init?(encoded: String) {
        var b64 = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard encoded.count <= 200, let data = Data(base64Encoded: b64), let text = String(data: data, encoding: .utf8),
              let colon = text.firstIndex(of: ":"), let micros = Int64(text[..<colon]),
              Self.timeRange.contains(micros) else { return nil }
        let no = String(text[text.index(after: colon)...])
        guard MerchantOrderNo.isStoredForm(no) else { return nil }   // a page may end at a legacy "." order
        self.init(updatedAt: micros, merchantOrderNo: no)
    }
}

/// `GET /v1/orders`'s page: newest update first, keyset-paginated.
package struct OrderList: Sendable {
    package init() {}

    /// Newest update first, keyset-paginated: `{orders: [...], nextCursor}` as response bytes.
    /// Each order is its stored document (see `OrderReadModel.document`), or, for a row
    /// without a current one, the same rendering derived from its state.
    package func page(_ f: OrderFilter, masked: Bool, on c: PostgresConnection) throws -> [UInt8] {
        func time(_ t: Timestamp?) -> SQLValue { t.map { .text(String($0.microseconds)) } ?? .null }
        let document = masked ? "coalesce(document_masked, document)" : "document"
        let result = try c.query("""
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
}
