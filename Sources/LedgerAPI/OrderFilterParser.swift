import LedgerCore
import LedgerHTTP
import LedgerPostgres
import LedgerService

/// Reads and validates the query string of `GET /v1/orders`.
enum OrderFilterParser {
    static let known: Set<String> = ["status", "paid", "attention", "provider", "updatedFrom", "updatedTo", "q", "limit", "cursor"]

    static func parse(_ request: HTTPRequest) throws -> OrderFilter {
        var f = OrderFilter()
        var seen = Set<String>()
        for item in request.queryItems {
            guard known.contains(item.name) else {
                throw ServiceError.badRequest("unknown filter \(item.name); known filters: \(known.sorted().joined(separator: ", "))")
            }
            guard seen.insert(item.name).inserted else {
                throw ServiceError.badRequest("\(item.name) is given more than once; give each filter once")
            }
        }
        let q = request.query
        if let s = q["status"] {
            guard let n = Int(s), OrderStatus(rawValue: n) != nil else { throw ServiceError.badRequest("status must be 1-6") }
            f.status = n
        }
        f.paid = try bool(q["paid"], "paid")
        f.attention = try bool(q["attention"], "attention")
        if let p = q["provider"] {
            guard !p.isEmpty, p.utf8.count <= 64 else { throw ServiceError.badRequest("provider must be 1-64 characters") }
            f.provider = p.lowercased()   // providers are stored lowercased
        }
        f.updatedFrom = try time(q["updatedFrom"], "updatedFrom")
        f.updatedTo = try time(q["updatedTo"], "updatedTo")
        if let text = q["q"] {
            guard !text.isEmpty, text.utf8.count <= 256 else { throw ServiceError.badRequest("q must be 1-256 characters") }
            f.q = text
        }
        if let l = q["limit"] {
            guard let n = Int(l), (1...500).contains(n) else { throw ServiceError.badRequest("limit must be 1-500") }
            f.limit = n
        }
        if let c = q["cursor"] {
            guard let cursor = OrderCursor(encoded: c) else {
                throw ServiceError.badRequest("cursor is not one this ledger issued: pass nextCursor back unchanged")
            }
            f.cursor = cursor
        }
        return f
    }

    private static func bool(_ text: String?, _ name: String) throws -> Bool? {
        guard let text else { return nil }
        switch text {
        case "true": return true
        case "false": return false
        default: throw ServiceError.badRequest("\(name) must be true or false")
        }
    }

    private static func time(_ text: String?, _ name: String) throws -> Timestamp? {
        guard let text else { return nil }
        return try TimeQuery.parse(text, name: name)
    }
}
