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
}

/// RFC 4180 cells, with the spreadsheet formula guard of exports.md. Written straight
/// into the file's buffer (no copy of a cell's bytes, no set lookups): it runs for every
/// cell of every row.
enum CSVCell {
    /// A text cell that begins with `= + - @`, tab or CR gets a leading `'` when
    /// `guarded`; a cell holding a comma, quote, CR or LF is quoted, inner quotes doubled.
    static func append(_ text: String, guarded: Bool, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { append(utf8: UnsafeRawBufferPointer($0), guarded: guarded, to: &out) }
    }

    /// The same for a cell's UTF-8 where it lies (a column of a COPY row).
    static func append(utf8 bytes: UnsafeRawBufferPointer, guarded: Bool, to out: inout [UInt8]) {
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
