import LedgerCore
import LedgerPostgres
import Testing

/// An event read in place (`EventCopyRow`) must hash and parse exactly as the
/// `StoredEvent` made of the same COPY row: its text as `String(decoding:as:)` reads it,
/// so bytes that are not UTF-8 (which a UTF-8 database never returns) are read the same
/// way by both.
@Suite("An event read in place reads as its StoredEvent")
struct EventCopyRowTests {
    /// Text fields: ASCII, UTF-8 beyond ASCII, and byte sequences that are not UTF-8.
    static let pieces: [[UInt8]] = [
        Array("order-A1".utf8), Array("S-1".utf8), Array(" é ☃ ".utf8), [0xFF], [0xC3], [0xED, 0xA0, 0x80],
        Array("\\n\"".utf8), [0x00], Array("12345678".utf8),
    ]

    static func text(_ random: inout JSONBTextTests.SplitMix) -> [UInt8] {
        (0..<Int(random.next() % 4)).flatMap { _ in pieces[Int(random.next() % UInt64(pieces.count))] }
    }

    struct Row {
        var fields: [[UInt8]?]
    }

    /// A row of the 13 columns `StoredEvent(copyRow:)` reads, the hash left to the caller.
    static func row(_ random: inout JSONBTextTests.SplitMix, position: Int64) -> Row {
        func int64(_ v: Int64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
        func json() -> [UInt8] {
            switch random.next() % 3 {
            case 0: return Array(#"{"a": ""#.utf8) + text(&random) + Array(#"", "b": 1}"#.utf8)
            case 1: return Array(#"{"merchantOrderNo": "S-1", "provider": "web3"}"#.utf8)
            default: return text(&random)
            }
        }
        let raw: [UInt8]? = random.next() % 3 == 0 ? nil : text(&random)
        return Row(fields: [
            int64(position), text(&random), text(&random), withUnsafeBytes(of: Int32(1 + random.next() % 9).bigEndian) { Array($0) },
            text(&random), text(&random), json(), raw, json(), text(&random),
            int64(Int64(random.next() % 1_000_000_000_000)), int64(Int64(random.next() % 1_000_000_000_000)),
            Array(repeating: 0, count: 32),
        ])
    }

    static func copy(_ rows: [Row]) -> [UInt8] {
        var out = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0] + [0, 0, 0, 0]
        for row in rows {
            out += withUnsafeBytes(of: Int16(row.fields.count).bigEndian) { Array($0) }
            for field in row.fields {
                out += withUnsafeBytes(of: Int32(field.map { Int32($0.count) } ?? -1).bigEndian) { Array($0) }
                out += field ?? []
            }
        }
        return out + [0xFF, 0xFF]
    }

    static func read(_ rows: [Row], _ each: (EventCopyRow) throws -> Void) throws {
        var reader = BinaryCopyReader()
        try copy(rows).withUnsafeBytes { bytes in try reader.read(bytes) { try each(EventCopyRow($0)) } }
        try reader.finish()
    }

    @Test("the hash, the payload and the metadata agree with the StoredEvent's, whatever the text's bytes (1,000 seeded rows)")
    func sameAsStoredEvent() throws {
        var random = JSONBTextTests.SplitMix(seed: 44)
        var rows = (1...1_000).map { Self.row(&random, position: Int64($0)) }
        let previous = Crypto.sha256(Array("the hash before".utf8))
        // The hash each row's StoredEvent gives, stored in every other row.
        var expected: [[UInt8]] = []
        try Self.read(rows) { expected.append(ChainHash.hash(previous: previous, event: try StoredEvent(copyRow: $0.row))) }
        for i in rows.indices where i % 2 == 0 { rows[i].fields[12] = expected[i] }
        var scratch: [UInt8] = []
        var i = 0
        var parsedPayloads = 0
        try Self.read(rows) { row in
            let stored = try StoredEvent(copyRow: row.row)
            #expect(row.hashMatches(previous: previous, scratch: &scratch) == (i % 2 == 0), "row \(i)")
            #expect(row.stream == stored.stream && row.type == stored.type, "row \(i)")
            let inPlace = Result { try row.payload() }, whole = Result { try JSONValue.parse(stored: stored.payloadJSON) }
            #expect((try? inPlace.get()) == (try? whole.get()), "row \(i)")
            if case .success = inPlace { parsedPayloads += 1 }
            #expect((try? row.metadata()) == (try? JSONValue.parse(stored: stored.metadataJSON)), "row \(i)")
            i += 1
        }
        #expect(i == 1_000)
        #expect(parsedPayloads > 300, "the valid JSON shapes are read")
    }

    @Test("ASCII is told from other bytes at every offset of an eight-byte step")
    func asciiTest() {
        for length in 0..<20 {
            let ascii = [UInt8](repeating: 0x7F, count: length)
            #expect(ascii.withUnsafeBytes(EventCopyRow.isASCII))
            for at in 0..<length {
                var bytes = ascii
                bytes[at] = 0x80
                #expect(!bytes.withUnsafeBytes(EventCopyRow.isASCII), "length \(length), at \(at)")
            }
        }
    }
}
