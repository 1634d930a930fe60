/// One cell of an export row (exports.md), typed so that each format writes it
/// the way the spec says: text guarded against spreadsheet formulas in CSV,
/// amounts exactly as the provider gave them, times in RFC 3339 UTC.
public enum ExportValue: Sendable, Hashable {
    case text(String)
    /// An exact decimal string, never altered (no formula guard, no reformatting).
    case amount(String)
    case integer(Int64)
    case time(Timestamp)
    case bool(Bool)
    case null

    /// Text of an optional string, or null.
    public static func text(_ value: String?) -> ExportValue { value.map { .text($0) } ?? .null }
    public static func amount(_ value: String?) -> ExportValue { value.map { .amount($0) } ?? .null }
    public static func time(_ value: Timestamp?) -> ExportValue { value.map { .time($0) } ?? .null }
    public static func integer(_ value: Int64?) -> ExportValue { value.map { .integer($0) } ?? .null }
}

/// The two export formats: RFC 4180 CSV with a header row and CRLF, or JSON Lines.
public enum ExportFormat: String, Sendable, CaseIterable {
    case csv, jsonl

    /// The header line (CSV only; empty for JSONL).
    public func header(_ columns: [String]) -> [UInt8] {
        guard self == .csv else { return [] }
        var out = [UInt8]()
        for (i, name) in columns.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            CSVCell.append(name, guarded: false, to: &out)
        }
        out += [13, 10]
        return out
    }

    /// Appends one row, its cells in the order of `columns`.
    public func append(_ cells: [ExportValue], columns: [String], to out: inout [UInt8]) {
        switch self {
        case .csv:
            for (i, cell) in cells.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                CSVCell.append(cell, to: &out)
            }
            out += [13, 10]
        case .jsonl:
            out.append(UInt8(ascii: "{"))
            for (i, (name, cell)) in zip(columns, cells).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONSerializer.write(.string(name), to: &out)
                out.append(UInt8(ascii: ":"))
                JSONSerializer.write(cell.json, to: &out)
            }
            out += [UInt8(ascii: "}"), 10]
        }
    }
}

extension ExportValue {
    var json: JSONValue {
        switch self {
        case .text(let s), .amount(let s): return .string(s)
        case .integer(let n): return .integer(n)
        case .time(let t): return .string(t.rfc3339)
        case .bool(let b): return .bool(b)
        case .null: return .null
        }
    }
}

/// RFC 4180 cells, with the spreadsheet formula guard of exports.md. Written straight
/// into the file's buffer (no copy of a cell's bytes, no set lookups): it runs for every
/// cell of every row.
enum CSVCell {
    static func append(_ value: ExportValue, to out: inout [UInt8]) {
        switch value {
        case .text(let s): append(s, guarded: true, to: &out)
        case .amount(let s): append(s, guarded: false, to: &out)
        case .integer(let n): DecimalDigits.append(n, to: &out)
        case .time(let t): t.appendRFC3339(to: &out)
        case .bool(let b): out.append(contentsOf: b ? trueBytes : falseBytes)
        case .null: break
        }
    }

    /// A text cell that begins with `= + - @`, tab or CR gets a leading `'` when
    /// `guarded`; a cell holding a comma, quote, CR or LF is quoted, inner quotes doubled.
    static func append(_ text: String, guarded: Bool, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            let mark = guarded && bytes.first.map(startsFormula) == true
            guard bytes.contains(where: needsQuotes) else {
                if mark { out.append(UInt8(ascii: "'")) }
                out.append(contentsOf: bytes)
                return
            }
            out.append(UInt8(ascii: "\""))
            if mark { out.append(UInt8(ascii: "'")) }
            for b in bytes {
                if b == UInt8(ascii: "\"") { out.append(b) }
                out.append(b)
            }
            out.append(UInt8(ascii: "\""))
        }
    }

    static func startsFormula(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 9, 13: return true
        default: return false
        }
    }

    static func needsQuotes(_ b: UInt8) -> Bool {
        b == UInt8(ascii: ",") || b == UInt8(ascii: "\"") || b == 13 || b == 10
    }

    static let trueBytes = Array("true".utf8)
    static let falseBytes = Array("false".utf8)
}
