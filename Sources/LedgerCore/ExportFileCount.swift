/// An export's file counted again from its bytes, as `ledger verify-export` reads it: its
/// rows, highest position and totals per asset, to compare with its manifest. The
/// signature covers the file's SHA-256, its row count and highest position, not `totals`:
/// counting the file again is what shows that the totals an accountant reconciles with are
/// the file's. Fed a piece at a time, so memory holds one row and the totals.
public struct ExportFileCount {
    public let kind: ExportKind
    public let format: ExportFormat
    public private(set) var rows: Int64 = 0
    public private(set) var highestPosition: Int64?
    /// By the asset as the file writes it: in CSV with the formula guard's `'` (exports.md),
    /// which `guardedAsset` puts on a manifest's asset too.
    public private(set) var totals: [[UInt8]: ExactSum] = [:]
    /// What in the file is not a row of its kind (the first such thing); nil while all reads.
    public private(set) var unreadable: String?

    /// The longest JSONL line read (a row's cells are bounded far below it): memory stays flat
    /// whatever the file holds.
    static let longestLine = 16 << 20
    private let asset: Int, amount: Int, position: Int
    private var csv = CSVRecordReader()
    private var line: [UInt8] = []
    private var sawHeader = false

    public init(kind: ExportKind, format: ExportFormat) {
        self.kind = kind
        self.format = format
        let columns = kind.columns
        asset = columns.firstIndex(of: "asset")!
        amount = columns.firstIndex(of: kind == .orders ? "paid_amount" : "amount")!
        position = columns.firstIndex(of: kind == .orders ? "last_position" : "position")!
    }

    /// The next bytes of the file.
    public mutating func feed(_ bytes: [UInt8]) {
        guard unreadable == nil else { return }
        switch format {
        case .csv:
            for b in bytes {
                if let record = csv.take(b) { csvRecord(record) }
                if unreadable != nil { return }
            }
        case .jsonl:
            for b in bytes {
                if b == 10 {
                    jsonLine(line)
                    line.removeAll(keepingCapacity: true)
                    if unreadable != nil { return }
                } else if line.count < Self.longestLine {
                    line.append(b)
                } else {
                    unreadable = "line \(rows + 1) is longer than \(Self.longestLine) bytes, which no row of an export is"
                    return
                }
            }
        }
    }

    /// Once every byte was fed: a file that ends inside a row is unreadable.
    public mutating func finish() {
        guard unreadable == nil else { return }
        switch format {
        case .csv:
            if csv.isInsideRecord { unreadable = "it ends in the middle of a row" }
            else if !sawHeader { unreadable = "it has no header row" }
        case .jsonl:
            if !line.isEmpty { unreadable = "it ends in the middle of a line" }
        }
    }

    /// An asset as a CSV file writes it (a leading `'` where it begins like a formula).
    public static func guardedAsset(_ asset: String, format: ExportFormat) -> [UInt8] {
        let bytes = Array(asset.utf8)
        guard format == .csv, let first = bytes.first, CSVCell.startsFormula(first) else { return bytes }
        return [UInt8(ascii: "'")] + bytes
    }

    private mutating func csvRecord(_ cells: [[UInt8]]) {
        guard sawHeader else {
            sawHeader = true
            if cells.map({ String(decoding: $0, as: UTF8.self) }) != kind.columns {
                unreadable = "its header is not the \(kind.rawValue) export's columns"
            }
            return
        }
        guard cells.count == kind.columns.count else {
            unreadable = "row \(rows + 1) has \(cells.count) cells, not \(kind.columns.count)"
            return
        }
        // An empty cell is a null: no asset, no amount, no position.
        func cell(_ i: Int) -> [UInt8]? { cells[i].isEmpty ? nil : cells[i] }
        count(asset: cell(asset), amount: cell(amount).map { String(decoding: $0, as: UTF8.self) },
              position: cell(position).map { String(decoding: $0, as: UTF8.self) })
    }

    private mutating func jsonLine(_ bytes: [UInt8]) {
        let keys = kind.columns
        guard let row = try? JSONValue.parse(bytes), case .object(let fields) = row, fields.map(\.0) == keys else {
            unreadable = "line \(rows + 1) is not a JSON object with the \(kind.rawValue) export's keys"
            return
        }
        func text(_ i: Int) -> String?? {
            switch fields[i].1 {
            case .string(let s): return .some(s)
            case .null: return .some(nil)
            default: return nil
            }
        }
        let positionValue: String?
        switch fields[position].1 {
        case .number(let n): positionValue = n
        case .null: positionValue = nil
        default:
            unreadable = "line \(rows + 1): \(keys[position]) is not a number"
            return
        }
        guard let assetValue = text(asset), let amountValue = text(amount) else {
            unreadable = "line \(rows + 1): \(keys[asset]) or \(keys[amount]) is neither a string nor null"
            return
        }
        count(asset: assetValue.flatMap { $0.isEmpty ? nil : Array($0.utf8) }, amount: amountValue, position: positionValue)
    }

    /// As `ExportManifest.counted` counts a row.
    private mutating func count(asset: [UInt8]?, amount: String?, position: String?) {
        if let position {
            guard let value = Int64(position) else {
                unreadable = "row \(rows + 1): \(kind.columns[self.position]) is not a whole number"
                return
            }
            highestPosition = max(highestPosition ?? value, value)
        }
        rows += 1
        guard let asset else { return }
        totals[asset, default: ExactSum()].add(amount)
    }
}

/// RFC 4180 records a byte at a time: quoted cells, doubled quotes, CRLF (or LF) between
/// records. Hands back each record's cells, unquoted, when its line ends.
struct CSVRecordReader {
    private var cells: [[UInt8]] = []
    private var cell: [UInt8] = []
    private var quoted = false
    /// A quote inside a quoted cell: the next byte says whether it closes the cell or is doubled.
    private var quoteSeen = false
    private var started = false

    var isInsideRecord: Bool { started }

    mutating func take(_ b: UInt8) -> [[UInt8]]? {
        if quoted {
            if quoteSeen {
                quoteSeen = false
                if b == UInt8(ascii: "\"") { cell.append(b); return nil }
                quoted = false   // the cell's closing quote; `b` follows it
            } else {
                if b == UInt8(ascii: "\"") { quoteSeen = true } else { cell.append(b) }
                return nil
            }
        }
        switch b {
        case UInt8(ascii: "\"") where cell.isEmpty:
            quoted = true
            started = true
        case UInt8(ascii: ","):
            cells.append(cell)
            cell.removeAll(keepingCapacity: true)
            started = true
        case 13:
            break   // the CR of CRLF; a CR inside a cell is quoted
        case 10:
            cells.append(cell)
            cell.removeAll(keepingCapacity: true)
            let record = cells
            cells.removeAll(keepingCapacity: true)
            started = false
            return record
        default:
            cell.append(b)
            started = true
        }
        return nil
    }
}

extension ExportFileCount {
    /// Where the manifest's `rows`, `highestPosition` and `totals` differ from the file's,
    /// in words; empty when they agree. Two assets a CSV file writes alike (`=X` and `'=X`)
    /// are one total in the file, so the manifest's are added together before comparing.
    public func differences(from manifest: JSONValue) -> [String] {
        if let unreadable { return ["the file is not a \(kind.rawValue) export in \(format.rawValue): \(unreadable)"] }
        var found = [String]()
        if manifest["rows"]?.int64Value != rows {
            found.append("the file has \(rows) row(s), its manifest says \(Self.shown(manifest["rows"]))")
        }
        let highest = manifest["highestPosition"]
        if highest?.int64Value != highestPosition || (highestPosition == nil && highest?.isNull != true) {
            found.append("the file's highest position is \(highestPosition.map(String.init) ?? "none"), its manifest says \(Self.shown(highest))")
        }
        guard let listed = manifestTotals(manifest["totals"]) else {
            return found + ["the manifest's totals are not a list of {asset, rows, amount}"]
        }
        for key in Set(listed.keys).union(totals.keys).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let name = JSONSerializer.quoted(String(decoding: key, as: UTF8.self))
            let file = totals[key].map { ($0.rows, $0.amount) }
            switch (file, listed[key]) {
            case let ((rows, amount)?, (listedRows, listedAmount)?):
                if rows != listedRows || amount != listedAmount {
                    found.append("the file's total for \(name) is \(rows) row(s), \(amount), its manifest says \(listedRows) row(s), \(listedAmount)")
                }
            case ((let rows, let amount)?, nil):
                found.append("the file has a total for \(name) (\(rows) row(s), \(amount)) that its manifest does not list")
            case (nil, (let listedRows, let listedAmount)?):
                found.append("the manifest lists a total for \(name) (\(listedRows) row(s), \(listedAmount)) that the file does not have")
            case (nil, nil):
                break
            }
        }
        return found
    }

    /// The manifest's totals by the asset as this file writes it; nil when they are not
    /// a list of `{asset: string, rows: integer, amount: exact decimal string}`.
    private func manifestTotals(_ value: JSONValue?) -> [[UInt8]: (Int64, ExactDecimal)]? {
        guard case .array(let entries)? = value else { return nil }
        var byAsset: [[UInt8]: (Int64, ExactDecimal)] = [:]
        for entry in entries {
            guard let asset = entry["asset"]?.stringValue, let rows = entry["rows"]?.int64Value,
                  let amount = entry["amount"]?.stringValue.flatMap(ExactDecimal.init) else { return nil }
            let key = Self.guardedAsset(asset, format: format)
            let (before, sum) = byAsset[key] ?? (0, .zero)
            byAsset[key] = (before + rows, sum + amount)
        }
        return byAsset
    }

    private static func shown(_ value: JSONValue?) -> String {
        value.map(JSONSerializer.string) ?? "nothing"
    }
}
