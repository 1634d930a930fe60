/// A fully read result in text format: rows of optional strings. Small and
/// Sendable, so it can leave the connection's thread.
public struct QueryResult: Sendable {
    public let columns: [String]
    public let rows: [[String?]]
    /// Rows affected, for INSERT/UPDATE/DELETE (`PQcmdTuples`).
    public let affectedRows: Int

    public init(columns: [String], rows: [[String?]], affectedRows: Int) {
        self.columns = columns
        self.rows = rows
        self.affectedRows = affectedRows
    }

    public var count: Int { rows.count }

    public func column(_ name: String) throws -> Int {
        guard let index = columns.firstIndex(of: name) else {
            throw PostgresError.unexpectedResult("no column named \(name) among \(columns)")
        }
        return index
    }

    /// The value of `name` in row `row`, as text; nil for SQL NULL.
    public func value(_ row: Int, _ name: String) throws -> String? {
        rows[row][try column(name)]
    }

    public func string(_ row: Int, _ name: String) throws -> String {
        guard let v = try value(row, name) else { throw PostgresError.unexpectedResult("column \(name) is NULL") }
        return v
    }

    public func int64(_ row: Int, _ name: String) throws -> Int64 {
        guard let v = try value(row, name), let n = Int64(v) else {
            throw PostgresError.unexpectedResult("column \(name) is not an integer")
        }
        return n
    }

    public func bool(_ row: Int, _ name: String) throws -> Bool {
        try string(row, name) == "t"
    }

    /// A bytea column in PostgreSQL's hex text format (`\x...`).
    public func bytes(_ row: Int, _ name: String) throws -> [UInt8]? {
        guard let v = try value(row, name) else { return nil }
        return try Self.decodeBytea(v)
    }

    static func decodeBytea(_ text: String) throws -> [UInt8] {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else {
            throw PostgresError.unexpectedResult("bytea is not in hex format (set bytea_output = hex)")
        }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2 - 1)
        var i = 2
        while i < utf8.count {
            guard let hi = hexNibble(utf8[i]), let lo = hexNibble(utf8[i + 1]) else {
                throw PostgresError.unexpectedResult("bytea holds a non-hex digit")
            }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    private static func hexNibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
}

/// A statement parameter. Text travels in text format; bytes travel in binary
/// format so raw bodies arrive byte for byte.
public enum SQLValue: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case null
    case text(String)
    case bytes([UInt8])
    /// A value in PostgreSQL's binary format for the type `oid` (see `BinaryArray`).
    case binary([UInt8], oid: UInt32)

    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int) { self = .text(String(value)) }

    public static func int(_ value: Int64) -> SQLValue { .text(String(value)) }
    public static func bool(_ value: Bool) -> SQLValue { .text(value ? "true" : "false") }
    public static func optional(_ value: String?) -> SQLValue { value.map { .text($0) } ?? .null }
}
