/// The six lifecycle statuses (lifecycle.md). Paid is 3 or 4, never "at least 3".
public enum OrderStatus: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case awaitingPayment = 1
    case confirming = 2
    case paid = 3
    case completed = 4
    case expired = 5
    case manualReview = 6

    /// The spec's snake_case name, as shown in the read model and exports.
    public var name: String {
        switch self {
        case .awaitingPayment: return "awaiting_payment"
        case .confirming: return "confirming"
        case .paid: return "paid"
        case .completed: return "completed"
        case .expired: return "expired"
        case .manualReview: return "manual_review"
        }
    }

    /// Listed explicitly: 5 and 6 are larger numbers but not paid.
    public var isPaid: Bool {
        switch self {
        case .paid, .completed: return true
        case .awaitingPayment, .confirming, .expired, .manualReview: return false
        }
    }

    public var description: String { name }

    public init?(name: String) {
        guard let s = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = s
    }

    /// Reads a status given as a JSON integer or a string of digits ("3"); anything
    /// else, including 0, 7 and "3.0", is `statusOutOfRange`.
    public static func parse(_ value: JSONValue) throws(CoreError) -> OrderStatus {
        let text: String
        switch value {
        case .number(let n): text = n
        case .string(let s): text = s
        default: throw .statusOutOfRange(JSONSerializer.string(value))
        }
        guard text.utf8.count == 1, let code = Int(text), let status = OrderStatus(rawValue: code) else {
            throw .statusOutOfRange(text)
        }
        return status
    }
}

/// Where an event came from; only some sources may move the status.
public enum EventSource: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case webhook
    case query
    case `operator`
    case client

    /// Webhooks (signature verified), queries and operator corrections decide
    /// the status; client (SDK) signals are advisory only.
    public var isAuthoritative: Bool {
        switch self {
        case .webhook, .query, .operator: return true
        case .client: return false
        }
    }

    public var description: String { rawValue }
}
