/// One change `JSONParser.parseLenient` made to a provider's body so that its parsed
/// form fits jsonb. The raw bytes keep the original; an event's metadata lists these
/// under `leftOut`, so an auditor reading the parsed form knows what it lacks.
public struct JSONAlteration: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case nulCharacter
        case loneSurrogate
        case tooDeep(limit: Int)
        case numberOutOfRange
        case numbersExpandTooMuch(limit: Int)
        case repeatedKey
    }

    public var kind: Kind
    public var path: JSONPath

    public init(kind: Kind, path: JSONPath) {
        self.kind = kind
        self.path = path
    }

    /// What jsonb could not hold.
    public var problem: String {
        switch kind {
        case .nulCharacter: return "a string held \\u0000, which jsonb cannot hold"
        case .loneSurrogate: return "a string held half of a UTF-16 surrogate pair"
        case .tooDeep(let limit): return "the value was nested more than \(limit) levels deep"
        case .numberOutOfRange: return "the number is beyond what PostgreSQL numeric holds"
        case .numbersExpandTooMuch(let limit): return "the body's numbers would grow by more than \(limit) bytes as jsonb stores them"
        case .repeatedKey: return "the key was repeated"
        }
    }

    /// What was left out, and what stands in its place.
    public var reason: String {
        switch kind {
        case .nulCharacter, .loneSurrogate: return problem + ": U+FFFD stands in its place"
        case .tooDeep, .numberOutOfRange, .numbersExpandTooMuch: return problem + ": null stands in its place"
        case .repeatedKey: return problem + ": only its last value is kept"
        }
    }

    /// `{"path": "...", "reason": "..."}`, as the event's metadata holds it.
    public var json: JSONValue {
        .object([("path", .string(path.description)), ("reason", .string(reason))])
    }

    /// The metadata's `leftOut` for a body's changes: nil when there were none.
    public static func list(_ alterations: [JSONAlteration]) -> JSONValue? {
        alterations.isEmpty ? nil : .array(alterations.map(\.json))
    }

    /// The metadata's `leftOut` for a body's changes followed by the fields its mapping
    /// could not read (`unread`, already `{path, reason}` objects); nil when both are empty.
    public static func list(_ alterations: [JSONAlteration], unread: JSONValue?) -> JSONValue? {
        let all = alterations.map(\.json) + (unread?.arrayValue ?? [])
        return all.isEmpty ? nil : .array(all)
    }

    public var description: String { (path.components.isEmpty ? "the body" : path.description) + ": " + reason }

    /// Refuses a body whose changes touch a field the adapter maps: a mapped value the
    /// ledger had to change would be stored wrong. Changes elsewhere are recorded.
    public static func refuseMapped(_ alterations: [JSONAlteration], mapped: Set<String>) throws(CoreError) {
        for a in alterations {
            guard let key = a.path.topKey, mapped.contains(key) else { continue }
            throw .invalidField(name: a.path.description, reason: a.problem)
        }
    }
}
