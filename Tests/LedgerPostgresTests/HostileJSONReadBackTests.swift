import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// Whatever the parser accepts, jsonb holds, prints as JSONBText says, and the parser
/// reads back from PostgreSQL's own text: checked against the real server on seeded
/// hostile JSON (HostileJSON), including what must be refused.
@Suite("Hostile JSON: what the ledger accepts, jsonb holds and every reader reads back")
struct HostileJSONReadBackTests {
    let connection: PostgresConnection
    init() throws { connection = try TestDatabase.create("hostilejson").connect() }

    /// PostgreSQL's text for `json` as jsonb, or nil when jsonb refuses it.
    func postgres(_ json: String) -> String? {
        try? connection.query("SELECT $1::jsonb::text AS t", [.text(json)]).string(0, "t")
    }

    @Test("2,000 seeded hostile documents: accepted ones round-trip through jsonb exactly; refused ones name where")
    func strictParse() throws {
        var generator = HostileJSON(seed: 0x4A53_4F4E, refusable: true)
        var accepted = 0, refused = 0
        for n in 0..<2_000 {
            let text = generator.object(depth: JSONParser.maxDepth, extraMembers: 1)
            let parsed: JSONValue
            do {
                parsed = try JSONValue.parse(text)
            } catch {
                refused += 1
                #expect(error.path != nil, "case \(n): the error does not say where")
                continue
            }
            accepted += 1
            guard let printed = postgres(JSONSerializer.string(parsed)) else {
                Issue.record("case \(n): the parser accepted what jsonb refuses: \(text.prefix(300))")
                continue
            }
            #expect(JSONBText.string(parsed) == printed, "case \(n): JSONBText differs from PostgreSQL")
            do {
                let back = try JSONValue.parse(stored: printed)
                #expect(JSONBText.string(back) == printed, "case \(n): the stored text does not read back to itself")
            } catch {
                Issue.record("case \(n): PostgreSQL's text does not read back: \(error)")
            }
        }
        // Both sides of the property are exercised.
        #expect(accepted > 600 && refused > 200, "accepted \(accepted), refused \(refused)")
    }

    @Test("2,000 seeded hostile provider bodies: the lenient parse always succeeds, jsonb holds its result, and each change is listed")
    func lenientParse() throws {
        var generator = HostileJSON(seed: 0x1E41_E417, refusable: true)
        var changed = 0
        for n in 0..<2_000 {
            let text = generator.object(depth: JSONParser.maxDepth + 2, extraMembers: 1)
            let strict = try? JSONValue.parse(text)
            let (value, alterations): (JSONValue, [JSONAlteration])
            do {
                (value, alterations) = try JSONParser.parseLenient(Array(text.utf8))
            } catch {
                Issue.record("case \(n): the lenient parse refused valid JSON: \(error)")
                continue
            }
            #expect((strict == nil) == !alterations.isEmpty, "case \(n): changes listed only when the strict parse refuses")
            if let strict { #expect(strict == value) }
            if !alterations.isEmpty { changed += 1 }
            guard let printed = postgres(JSONSerializer.string(value)) else {
                Issue.record("case \(n): jsonb refuses the lenient result: \(text.prefix(300))")
                continue
            }
            #expect(JSONBText.string(value) == printed, "case \(n)")
            #expect((try? JSONValue.parse(stored: printed)) != nil, "case \(n): the stored text does not read back")
        }
        #expect(changed > 200, "only \(changed) bodies needed a change")
    }
}
