import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// The writer hashes events over JSONBText's rendering, so it must print
/// exactly what PostgreSQL prints for `jsonb::text`. Checked against the real
/// server, on hand-picked edge cases and on random values.
@Suite("JSONBText renders jsonb as PostgreSQL does")
struct JSONBTextTests {
    let connection: PostgresConnection
    init() throws { connection = try TestDatabase.create("jsonb").connect() }

    func postgres(_ json: String) throws -> String {
        try connection.query("SELECT $1::jsonb::text AS t", [.text(json)]).string(0, "t")
    }

    @Test("number literals print as numeric does", arguments: [
        "0", "-0", "-0.0", "0.00", "40", "40.00", "1.50e3", "1.5e-3", "1e2", "1E+2", "-12.3400", "0.000000000000000001",
        "123456789012345678901234567890.123456789", "1e-20", "5e0", "-7.0e1", "0.5e1", "12e-1", "100e-2", "9e20",
    ])
    func numbers(literal: String) throws {
        #expect(JSONBText.string(try JSONValue.parse(literal)) == (try postgres(literal)))
    }

    /// Long literals are built here, not passed as test arguments (the test library
    /// describes each argument, and 130,000-character ones are not worth describing).
    static func literal(_ name: String) -> String {
        switch name {
        case "10,000 digits": return "1" + String(repeating: "0", count: 10_000)
        case "16,383 fraction digits": return "0." + String(repeating: "0", count: 16_382) + "1"
        case "131,073 digits": return "1" + String(repeating: "0", count: 131_072)
        default: return name
        }
    }

    @Test("numbers at numeric's edges: what jsonb holds, the parser accepts, JSONBText prints as PostgreSQL does and the stored text reads back", arguments: [
        "1e300", "-1e300", "1e-300", "1e1001", "1e131071", "1.0e131071", "0.1e131072", "1e-16383", "0e-16383",
        "0e999999", "-0e5", "-0.0e-3", "12345.6789e-16379", "10,000 digits", "16,383 fraction digits",
    ])
    func numbersAtTheEdges(name: String) throws {
        let literal = Self.literal(name)
        let printed = try postgres(literal)
        #expect(JSONBText.numeric(literal) == printed)
        #expect(JSONBText.string(try JSONValue.parse(literal)) == printed)
        #expect(try JSONValue.parse(stored: printed) == .number(printed))
        #expect(JSONBText.numeric(printed) == printed, "numeric's own text is canonical")
    }

    @Test("numbers beyond numeric's range: PostgreSQL refuses them, and so do the parser and JSONBText", arguments: [
        "1e131072", "10e131071", "131,073 digits", "1e-16384", "1.0e-16383", "0e-16384", "1e2147483648", "0e-2147483649",
    ])
    func numbersBeyondTheRange(name: String) throws {
        let literal = Self.literal(name)
        #expect(throws: PostgresError.self) { try postgres(literal) }
        #expect(JSONBText.numeric(literal) == nil)
        do {
            _ = try JSONValue.parse(literal)
            Issue.record("the parser accepted \(name)")
        } catch {
            #expect(error.kind == .numberOutOfRange)
        }
    }

    @Test("strings, keys and nesting print as jsonb does")
    func structure() throws {
        let samples = [
            #"{"b":1,"a":2,"aa":{"z":[1,2,{"y":null}],"é":"\u00e9"},"":true}"#,
            #"["tab\tnew\nline","quote\"back\\slash","ctl\u0001\u001f","del\u007f","emoji😀"]"#,
            #"{"merchantOrderNo":"SO-1","status":3,"amount":"40.00","body":{"chainId":2,"payAmountDisplay":"40.00"}}"#,
            "[]", "{}", "[[],{}]", "\"x\"", "null",
        ]
        for s in samples {
            #expect(JSONBText.string(try JSONValue.parse(s)) == (try postgres(s)), "\(s)")
        }
    }

    @Test("a repeated key keeps its last value; keys equal only as Unicode stay apart")
    func repeatedKeys() throws {
        // The parser refuses repeated keys, but a value built in code may have them.
        let values: [JSONValue] = [
            .object([("a", .number("1")), ("b", .number("2")), ("a", .number("3"))]),
            .object([("\u{e9}", .number("1")), ("e\u{301}", .number("2")), ("\u{e9}", .number("4"))]),
        ]
        for value in values {
            let compact = JSONSerializer.string(value)
            #expect(JSONBText.string(value) == (try postgres(compact)), "\(compact)")
        }
    }

    @Test("2,000 random values print identically")
    func random() throws {
        var rng = SplitMix(seed: 42)
        for _ in 0..<2_000 {
            let value = Self.randomValue(&rng, depth: 0)
            let compact = JSONSerializer.string(value)
            #expect(JSONBText.string(value) == (try postgres(compact)), "\(compact)")
        }
    }

    @Test("text judged canonical is exactly what PostgreSQL prints")
    func canonicalTexts() throws {
        var rng = SplitMix(seed: 99)
        var judgedCanonical = 0
        for _ in 0..<1_500 {
            let value = Self.randomValue(&rng, depth: 0)
            guard let rendered = JSONBText.string(value) else { continue }
            // The checker is conservative (a key with an escape is never judged
            // canonical); the property that matters is the other direction.
            var candidates = [rendered]
            // Small edits of canonical text, and the compact form: whatever the
            // checker accepts, PostgreSQL must print back unchanged.
            candidates.append(JSONSerializer.string(value))
            var bytes = Array(rendered.utf8)
            if !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                let edits: [UInt8] = [32, 44, 58, 48, 45, 46, 101, 92, 34, 117, 97]
                var inserted = bytes
                inserted.insert(edits.randomElement(using: &rng)!, at: at)
                candidates.append(String(decoding: inserted, as: UTF8.self))
                bytes.remove(at: at)
                candidates.append(String(decoding: bytes, as: UTF8.self))
            }
            for text in candidates where JSONBText.isCanonical(text) {
                judgedCanonical += 1
                #expect(try postgres(text) == text, "\(text)")
            }
        }
        #expect(judgedCanonical > 1_000)
    }

    @Test("payloads the way the service writes them are judged canonical as rendered")
    func servicePayloads() throws {
        let payload: JSONValue = .object([
            ("merchantOrderNo", .string("SO-1")), ("status", .integer(3)), ("amount", .string("40.00")),
            ("email", .string("a.b+c@example.com")), ("note", .string("line\nbreak \"quoted\" tab\t ü 😀")),
            ("body", .object([("chainId", .integer(1)), ("payAmountDisplay", .number("40.00")), ("z", .array([.null, .bool(true)]))])),
        ])
        let text = try #require(JSONBText.string(payload))
        #expect(JSONBText.isCanonical(text))
        #expect(try postgres(text) == text)
    }

    @Test("non-canonical shapes are recognised", arguments: [
        #"{"b": 1, "a": 2}"#, #"{"a":1}"#, #"{"a": 1,"b": 2}"#, #"{"a": 1, "a": 2}"#, " 1", "1 ", "-0", "-0.00", "1e2",
        "01", "1.", ".5", #""\/""#, #""\u0041""#, #""\u000a""#, #""\u001F""#, "[1,2]", #"{"\n": 1}"#, "tru", "nul",
    ])
    func nonCanonical(text: String) {
        #expect(!JSONBText.isCanonical(text))
    }

    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let alphabet: [String] = ["a", "b", "Z", "0", "é", "😀", "\"", "\\", "\n", "\t", "\u{1}", "\u{7f}", " ", "-", "_"]

    static func randomString(_ rng: inout SplitMix) -> String {
        (0..<Int.random(in: 0...6, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }.joined()
    }

    static func randomNumber(_ rng: inout SplitMix) -> String {
        var s = Bool.random(using: &rng) ? "-" : ""
        s += Bool.random(using: &rng) ? "0" : String(Int.random(in: 1...999_999, using: &rng))
        if Bool.random(using: &rng) { s += "." + String((0..<Int.random(in: 1...6, using: &rng)).map { _ in "0123456789".randomElement(using: &rng)! }) }
        if Int.random(in: 0..<4, using: &rng) == 0 {
            s += ["e", "E"].randomElement(using: &rng)! + ["", "+", "-"].randomElement(using: &rng)! + String(Int.random(in: 0...12, using: &rng))
        }
        return s
    }

    static func randomValue(_ rng: inout SplitMix, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2, 3: return .number(randomNumber(&rng))
        case 4: return .string(randomString(&rng))
        case 5: return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            var keys = Set<String>()
            var fields: [(String, JSONValue)] = []
            for _ in 0..<Int.random(in: 0...5, using: &rng) {
                let k = randomString(&rng)
                if keys.insert(k).inserted { fields.append((k, randomValue(&rng, depth: depth + 1))) }
            }
            return .object(fields)
        }
    }
}
