import LedgerCore

/// Reads PostgreSQL's binary COPY format (a signature and header, then rows of
/// length-prefixed fields, then a trailer) from the pieces `copyOut` hands out, whatever
/// their sizes: a row cut across pieces waits for the rest. Rows are handed out in place,
/// without copying their bytes.
public struct BinaryCopyReader {
    private var pending: [UInt8] = []
    private var headerRead = false
    /// (start, length) of each field of the row being handed out; length -1 for NULL.
    private var fields: [Int] = []
    /// True once the trailer was read: no row follows.
    public private(set) var ended = false

    public init() {}

    static let signature: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]

    /// Hands each complete row of `piece` (after what earlier pieces left) to `row`.
    public mutating func read(_ piece: UnsafeRawBufferPointer, row: (BinaryCopyRow) throws -> Void) throws {
        if pending.isEmpty {
            let used = try readRows(piece, row)
            if used < piece.count { pending.append(contentsOf: piece[used...]) }
            return
        }
        pending.append(contentsOf: piece)
        let buffered = pending
        let used = try buffered.withUnsafeBytes { try readRows($0, row) }
        pending.removeFirst(used)
    }

    /// Throws unless the whole output was read up to its trailer, with nothing after it.
    public func finish() throws {
        guard ended, pending.isEmpty else {
            throw PostgresError.unexpectedResult("the binary COPY output ended before its trailer")
        }
    }

    /// The rows complete in `bytes`; returns how many bytes they used.
    private mutating func readRows(_ bytes: UnsafeRawBufferPointer, _ row: (BinaryCopyRow) throws -> Void) throws -> Int {
        var at = 0
        if !headerRead {
            let fixed = Self.signature.count + 8
            guard bytes.count >= fixed else { return 0 }
            guard bytes.prefix(Self.signature.count).elementsEqual(Self.signature) else {
                throw PostgresError.unexpectedResult("the COPY output is not in the binary format")
            }
            let extensionLength = Int(Self.int32(bytes, Self.signature.count + 4))
            guard bytes.count >= fixed + extensionLength else { return 0 }
            at = fixed + extensionLength
            headerRead = true
        }
        while !ended, bytes.count - at >= 2 {
            let count = Int(Int16(bitPattern: UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1])))
            if count == -1 {
                ended = true
                at += 2
                break
            }
            var cursor = at + 2
            fields.removeAll(keepingCapacity: true)
            var complete = true
            for _ in 0..<count {
                guard bytes.count - cursor >= 4 else { complete = false; break }
                let length = Int(Self.int32(bytes, cursor))
                cursor += 4
                if length < 0 {
                    fields.append(cursor); fields.append(-1)
                    continue
                }
                guard bytes.count - cursor >= length else { complete = false; break }
                fields.append(cursor); fields.append(length)
                cursor += length
            }
            guard complete else { break }
            try fields.withUnsafeBufferPointer { try row(BinaryCopyRow(bytes: bytes, fields: $0)) }
            at = cursor
        }
        if ended && at < bytes.count {
            throw PostgresError.unexpectedResult("bytes follow the binary COPY trailer")
        }
        return at
    }

    static func int32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> Int32 {
        Int32(bitPattern: UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3]))
    }
}

/// One row of a binary COPY, valid only while the reader hands it out. Values are in
/// PostgreSQL's binary send format: integers big-endian, text as UTF-8, timestamps as
/// microseconds since 2000-01-01 UTC.
public struct BinaryCopyRow {
    let bytes: UnsafeRawBufferPointer
    let fields: UnsafeBufferPointer<Int>

    public var count: Int { fields.count / 2 }

    public func isNull(_ i: Int) -> Bool { fields[2 * i + 1] < 0 }

    /// The field's bytes in place (nil for NULL), valid only during the row's hand-out.
    public func buffer(_ i: Int) -> UnsafeRawBufferPointer? {
        let length = fields[2 * i + 1]
        if length < 0 { return nil }
        let start = fields[2 * i]
        return UnsafeRawBufferPointer(rebasing: bytes[start..<start + length])
    }

    public func bytes(_ i: Int) -> [UInt8]? { buffer(i).map { Array($0) } }

    public func string(_ i: Int) -> String? { buffer(i).map { String(decoding: $0, as: UTF8.self) } }

    public func int64(_ i: Int) throws -> Int64 {
        guard let b = buffer(i), b.count == 8 else { throw Self.shape(i, "an int8") }
        return b.reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    public func int32(_ i: Int) throws -> Int32 {
        guard let b = buffer(i), b.count == 4 else { throw Self.shape(i, "an int4") }
        return BinaryCopyReader.int32(b, 0)
    }

    public func int16(_ i: Int) throws -> Int16 {
        guard let b = buffer(i), b.count == 2 else { throw Self.shape(i, "an int2") }
        return Int16(bitPattern: UInt16(b[0]) << 8 | UInt16(b[1]))
    }

    public func bool(_ i: Int) throws -> Bool {
        guard let b = buffer(i), b.count == 1 else { throw Self.shape(i, "a bool") }
        return b[0] != 0
    }

    /// A timestamptz field (nil for NULL).
    public func timestamp(_ i: Int) throws -> Timestamp? {
        if isNull(i) { return nil }
        return Timestamp(microseconds: try int64(i) &+ Self.postgresEpochMicros)
    }

    /// 2000-01-01 UTC, PostgreSQL's epoch, in microseconds since 1970.
    static let postgresEpochMicros: Int64 = 946_684_800_000_000

    private static func shape(_ i: Int, _ what: String) -> PostgresError {
        .unexpectedResult("binary COPY field \(i) is not \(what)")
    }

    /// The row's fields copied out of the reader's buffer, to be read after its hand-out.
    package func owned() -> Owned {
        var copied: [UInt8] = []
        var offsets: [Int] = []
        offsets.reserveCapacity(fields.count)
        for i in 0..<count {
            guard let field = buffer(i) else {
                offsets.append(copied.count); offsets.append(-1)
                continue
            }
            offsets.append(copied.count); offsets.append(field.count)
            copied.append(contentsOf: field)
        }
        return Owned(bytes: copied, fields: offsets)
    }

    /// A row copied out of the reader's buffer (`owned()`).
    package struct Owned: Sendable {
        let bytes: [UInt8]
        let fields: [Int]

        /// The row, read in place from the copy, for the length of `body`.
        package func withRow<R>(_ body: (BinaryCopyRow) throws -> R) rethrows -> R {
            try bytes.withUnsafeBytes { b in try fields.withUnsafeBufferPointer { f in try body(BinaryCopyRow(bytes: b, fields: f)) } }
        }
    }
}
