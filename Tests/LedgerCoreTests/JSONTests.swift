import Testing
import LedgerCore

@Suite("JSON")
struct JSONTests {
    @Test("numbers keep their literal text and objects their key order")
    func literalsAndOrder() throws {
        let v = try JSONValue.parse(#"{"b":40.00,"a":[1,-0.5e3,true,null],"c":"x"}"#)
        #expect(v["b"] == .number("40.00"))
        #expect(v.description == #"{"b":40.00,"a":[1,-0.5e3,true,null],"c":"x"}"#)
    }

    @Test("serialising then parsing gives the same value")
    func roundTrip() throws {
        let v: JSONValue = .object([("s", .string("tab\t\"q\" \\ é 😀 \u{1}")), ("n", .number("1.25")), ("e", .array([])), ("o", .object([]))])
        let text = v.description
        #expect(text == #"{"s":"tab\t\"q\" \\ é 😀 \u0001","n":1.25,"e":[],"o":{}}"#)
        #expect(try JSONValue.parse(text) == v)
    }

    @Test("escapes, including surrogate pairs, decode to the right characters")
    func escapes() throws {
        #expect(try JSONValue.parse(#""\u00e9\ud83d\ude00\n\/""#) == .string("é😀\n/"))
    }

    @Test("invalid inputs fail with the matching JSONError kind")
    func rejects() {
        func kind(_ s: [UInt8]) -> JSONError.Kind? {
            do { _ = try JSONParser.parse(s); return nil } catch { return error.kind }
        }
        #expect(kind([]) == .empty)
        #expect(kind(bytes("{\"a\":1} x")) == .trailingData)
        #expect(kind(bytes("{\"a\":1,\"a\":2}")) == .duplicateKey("a"))
        #expect(kind(bytes("\"\\u0000\"")) == .nulCharacter)
        #expect(kind(bytes("\"\\ud800\"")) == .loneSurrogate)
        #expect(kind(bytes("\"\\udc00\"")) == .loneSurrogate)
        #expect(kind([0x22, 0xff, 0x22]) == .invalidUTF8)
        #expect(kind([0x22, 0xc0, 0xaf, 0x22]) == .invalidUTF8)          // overlong "/"
        #expect(kind([0x22, 0xed, 0xa0, 0x80, 0x22]) == .invalidUTF8)    // encoded surrogate
        #expect(kind([0x22, 0x01, 0x22]) == .controlCharacterInString)
        #expect(kind(bytes("01")) == .trailingData)
        #expect(kind(bytes("1.")) == .unexpectedEnd)
        #expect(kind(bytes("-x")) == .invalidNumber)
        #expect(kind(bytes("1e131072")) == .numberOutOfRange)
        #expect(kind(bytes("1e-16384")) == .numberOutOfRange)
        #expect(kind(bytes("\"\\x\"")) == .invalidEscape)
        #expect(kind(bytes("[1,]")) == .unexpectedByte(UInt8(ascii: "]")))
        #expect(kind(bytes("{\"a\" 1}")) == .unexpectedByte(UInt8(ascii: "1")))
        #expect(kind(bytes("tru")) == .unexpectedEnd)
        #expect(kind([0xef, 0xbb, 0xbf, 0x7b, 0x7d]) == .unexpectedByte(0xef))
    }

    @Test("numbers may grow by at most 1 MiB as jsonb prints them: eight 1e131071 fit, nine do not; a provider body's ninth becomes null and is noted")
    func numberExpansionIsBounded() throws {
        let eight = "[" + Array(repeating: "1e131071", count: 8).joined(separator: ",") + "]"
        #expect((try? JSONValue.parse(eight)) != nil)
        let nine = "{\"n\":[" + Array(repeating: "1e131071", count: 9).joined(separator: ",") + ",5e2]}"
        do {
            _ = try JSONValue.parse(nine)
            Issue.record("accepted nine numbers of 128 KiB each")
        } catch {
            #expect(error.kind == .numbersExpandTooMuch(limit: 1 << 20) && error.path == "n[8]", "\(error)")
        }
        let (value, alterations) = try JSONParser.parseLenient(Array(nine.utf8))
        #expect(value["n"]?.arrayValue?[8] == .null && value["n"]?.arrayValue?[9] == .number("5e2"))
        #expect(alterations.map(\.path.description) == ["n[8]"])
    }

    @Test("nesting up to 64 levels parses, deeper fails with tooDeep")
    func depth() {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect((try? JSONValue.parse(ok)) != nil)
        do { _ = try JSONValue.parse(deep); Issue.record("accepted 65 levels") } catch { #expect(error.kind == .tooDeep(limit: 64)) }
        let huge = String(repeating: "[", count: 100_000)
        do { _ = try JSONValue.parse(huge); Issue.record("accepted") } catch { #expect(error.kind == .tooDeep(limit: 64)) }
    }

    @Test("the serializer never writes \\u0000, which PostgreSQL jsonb rejects")
    func nulIsReplaced() {
        let text = JSONValue.string("a\u{0}b").description
        #expect(!text.contains("\\u0000"))
        #expect(text == "\"a\u{FFFD}b\"")
    }

    @Test("a malformed number literal built in code is written as a string, keeping output valid")
    func badLiteral() throws {
        let text = JSONValue.array([.number("1e"), .number("abc"), .integer(42)]).description
        #expect(text == #"["1e","abc",42]"#)
        _ = try JSONValue.parse(text)
    }
}
