/// Writes export rows (exports.md) cell by cell straight into a file's bytes, in
/// either format: CSV text guarded against spreadsheet formulas, amounts exactly as
/// the provider gave them, times in RFC 3339 UTC; or one JSON object a line, the
/// columns as keys. No cell is made into a value first: this runs for every cell of
/// every row of an export.
///
/// The cells of a row are written in the order of `columns`, then `endRow()`.
public struct ExportRowWriter {
    public let format: ExportFormat
    /// Each column's JSON key with its colon (`"name":`), for JSON Lines.
    private let keys: [[UInt8]]
    /// The bytes written since the last `take()`.
    public private(set) var bytes: [UInt8] = []
    /// The column the next cell goes to.
    private var column = 0

    public init(format: ExportFormat, columns: [String]) {
        self.format = format
        keys = columns.map { name in
            var key = [UInt8]()
            JSONSerializer.writeString(name, to: &key)
            key.append(UInt8(ascii: ":"))
            return key
        }
    }

    /// Hands out what was written, leaving the writer empty (with room for as much again).
    public mutating func take() -> [UInt8] {
        precondition(column == 0, "a row was left unfinished")
        let out = bytes
        bytes = []
        bytes.reserveCapacity(out.count)
        return out
    }

    /// Free text (or null): guarded and quoted in CSV.
    public mutating func text(_ value: String?) {
        startCell()
        guard let value else { return null() }
        switch format {
        case .csv: CSVCell.append(value, guarded: true, to: &bytes)
        case .jsonl: JSONSerializer.writeString(value, to: &bytes)
        }
    }

    /// An exact decimal string (or null), never altered: no formula guard, no reformatting.
    public mutating func amount(_ value: String?) {
        startCell()
        guard let value else { return null() }
        switch format {
        case .csv: CSVCell.append(value, guarded: false, to: &bytes)
        case .jsonl: JSONSerializer.writeString(value, to: &bytes)
        }
    }

    /// Free text (or null) given as UTF-8 where it lies (a column of a COPY row): the same
    /// cell as `text` makes of that string.
    public mutating func text(utf8 value: UnsafeRawBufferPointer?) { cell(utf8: value, guarded: true) }

    /// An exact decimal string (or null) given as UTF-8 where it lies: the same cell as `amount`.
    public mutating func amount(utf8 value: UnsafeRawBufferPointer?) { cell(utf8: value, guarded: false) }

    private mutating func cell(utf8 value: UnsafeRawBufferPointer?, guarded: Bool) {
        startCell()
        guard let value else { return null() }
        switch format {
        case .csv: CSVCell.append(utf8: value, guarded: guarded, to: &bytes)
        case .jsonl: JSONSerializer.writeString(String(decoding: value, as: UTF8.self), to: &bytes)
        }
    }

    public mutating func integer(_ value: Int64?) {
        startCell()
        guard let value else { return null() }
        DecimalDigits.append(value, to: &bytes)
    }

    /// A time in RFC 3339 UTC (or null); a string in JSON Lines.
    public mutating func time(_ value: Timestamp?) {
        startCell()
        guard let value else { return null() }
        if format == .jsonl { bytes.append(UInt8(ascii: "\"")) }
        value.appendRFC3339(to: &bytes)
        if format == .jsonl { bytes.append(UInt8(ascii: "\"")) }
    }

    public mutating func bool(_ value: Bool) {
        startCell()
        bytes.append(contentsOf: value ? CSVCell.trueBytes : CSVCell.falseBytes)
    }

    /// Ends the row: CRLF in CSV, the closing brace and LF in JSON Lines.
    public mutating func endRow() {
        precondition(column == keys.count, "a row has \(keys.count) cells, not \(column)")
        switch format {
        case .csv: bytes.append(contentsOf: [13, 10])
        case .jsonl: bytes.append(contentsOf: [UInt8(ascii: "}"), 10])
        }
        column = 0
    }

    /// The separator before a cell (and the key in JSON Lines).
    private mutating func startCell() {
        precondition(column < keys.count, "a row has \(keys.count) cells")
        switch format {
        case .csv:
            if column > 0 { bytes.append(UInt8(ascii: ",")) }
        case .jsonl:
            bytes.append(UInt8(ascii: column == 0 ? "{" : ","))
            bytes.append(contentsOf: keys[column])
        }
        column += 1
    }

    /// An empty CSV cell, or JSON null.
    private mutating func null() {
        if format == .jsonl { bytes.append(contentsOf: Self.nullBytes) }
    }

    private static let nullBytes = Array("null".utf8)
}
