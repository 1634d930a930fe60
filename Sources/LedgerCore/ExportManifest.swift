/// Everything an export's manifest says (exports.md), accumulated row by row as the
/// rows are written, so nothing but the totals is kept in memory.
public struct ExportManifest: Sendable {
    public let kind: ExportKind
    public let from: Timestamp
    public let to: Timestamp
    public let format: ExportFormat
    public private(set) var rows: Int64 = 0
    public private(set) var highestPosition: Int64?
    /// Per asset (by its bytes): rows and the exact sum of their amounts.
    public private(set) var totals: [AssetKey: ExactSum] = [:]
    private let digest = Crypto.SHA256Stream()
    private var sha256: [UInt8]?

    public init(kind: ExportKind, from: Timestamp, to: Timestamp, format: ExportFormat) {
        self.kind = kind
        self.from = from
        self.to = to
        self.format = format
    }

    /// Every byte of the data file passes through here, header included.
    public func wrote(_ bytes: [UInt8]) { digest.update(bytes) }

    /// A row written: the newest ledger position it reflects, and the asset and amount it
    /// adds to the totals (nil or empty asset: it adds to none, as a CSV file cannot tell an
    /// empty cell from a null; an amount that is no decimal adds a row only).
    public mutating func counted(asset: String?, amount: String?, position: Int64?) {
        rows += 1
        if let position { highestPosition = max(highestPosition ?? position, position) }
        guard let asset, !asset.isEmpty else { return }
        totals[AssetKey(asset), default: ExactSum()].add(amount)   // in place: one lookup of the asset a row, not two
    }

    /// Takes the rows, totals and highest position counted by `other` (an export's rows
    /// counted where they were formatted), keeping this manifest's bytes and digest.
    public mutating func takeCounts(of other: ExportManifest) {
        rows = other.rows
        highestPosition = other.highestPosition
        totals = other.totals
    }

    /// The file's SHA-256, once every byte was written (asking again gives the same).
    private mutating func finalDigest() -> [UInt8] {
        if let sha256 { return sha256 }
        let value = digest.finish()
        sha256 = value
        return value
    }

    /// The manifest: `{kind, from, to, format, rows, sha256, totals: [{asset, rows, amount}],
    /// highestPosition, ledgerHead: {position, hash}, generatedAt}`; totals sorted by asset.
    public mutating func json(ledgerHead: (position: Int64, hash: [UInt8]), generatedAt: Timestamp) -> JSONValue {
        let sums: [JSONValue] = totals.keys.sorted().map { asset in
            let t = totals[asset]!
            return .object([("asset", .string(asset.name)), ("rows", .integer(t.rows)), ("amount", .string(t.amount.description))])
        }
        return .object([
            ("kind", .string(kind.rawValue)), ("from", .string(from.rfc3339)), ("to", .string(to.rfc3339)),
            ("format", .string(format.rawValue)), ("rows", .integer(rows)), ("sha256", .string(Hex.encode(finalDigest()))),
            ("totals", .array(sums)), ("highestPosition", highestPosition.map { .integer($0) } ?? .null),
            ("ledgerHead", .object([("position", .integer(ledgerHead.position)), ("hash", .string(Hex.encode(ledgerHead.hash)))])),
            ("generatedAt", .string(generatedAt.rfc3339)),
        ])
    }
}

/// An asset named by its UTF-8 bytes: two spellings Swift's `String` calls equal (`é` as one
/// scalar, or `e` and a combining accent) are two assets, as they are two in the file's rows
/// and to whoever reads them byte for byte. Sorted by those bytes.
public struct AssetKey: Hashable, Comparable, Sendable {
    public let name: String

    public init(_ name: String) { self.name = name }

    public static func == (a: AssetKey, b: AssetKey) -> Bool { a.name.utf8.elementsEqual(b.name.utf8) }

    public static func < (a: AssetKey, b: AssetKey) -> Bool { a.name.utf8.lexicographicallyPrecedes(b.name.utf8) }

    public func hash(into hasher: inout Hasher) {
        for byte in name.utf8 { hasher.combine(byte) }
    }
}
