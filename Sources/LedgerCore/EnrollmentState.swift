/// The read model of a BankPay enrollment (stream `enrollment-{ref}`).
///
/// Like `OrderState`, a function of the set of events: the phase is that of
/// the newest signal by (observedAt, position), and the flags accumulate.
public struct EnrollmentState: Sendable, Hashable {
    /// Where the enrollment stands, as shown to support staff.
    public enum Phase: String, Sendable, Hashable {
        case started
        case bankAccountAdded = "bank_account_added"
        case failed
        case closed
    }

    public let enrollmentRef: String
    public internal(set) var phase: Phase = .started
    /// True once any bankAccountAdded arrived, even if the flow later closed or failed.
    public internal(set) var bankAccountAdded = false
    /// The enrollment intent id from bankAccountAdded (lowest position wins).
    public internal(set) var intentId: String?
    /// The newest error code and message, if any.
    public internal(set) var lastError: String?
    public internal(set) var lastErrorMessage: String?
    public internal(set) var positions: [Int64] = []
    public internal(set) var updatedAt: Timestamp?
    var newest: (observedAt: Timestamp, position: Int64, phase: Phase)?
    var newestError: (observedAt: Timestamp, position: Int64, code: String?, message: String?)?
    var intent: (position: Int64, id: String)?

    public init(enrollmentRef: String) { self.enrollmentRef = enrollmentRef }

    public var eventCount: Int { positions.count }
    public var lastPosition: Int64? { positions.last }

    public static func == (a: EnrollmentState, b: EnrollmentState) -> Bool {
        a.enrollmentRef == b.enrollmentRef && a.phase == b.phase && a.bankAccountAdded == b.bankAccountAdded
            && a.intentId == b.intentId && a.lastError == b.lastError && a.lastErrorMessage == b.lastErrorMessage
            && a.positions == b.positions && a.updatedAt == b.updatedAt
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(enrollmentRef); hasher.combine(phase); hasher.combine(positions)
    }

    /// Folds one event; other streams and repeated positions change nothing.
    public static func reduce(_ state: EnrollmentState, _ recorded: RecordedEvent) -> EnrollmentState {
        var s = state
        s.apply(recorded)
        return s
    }

    /// Folds an enrollment stream's events (in any order) into a fresh state.
    public static func replay<S: Sequence>(_ enrollmentRef: String, _ events: S) -> EnrollmentState where S.Element == RecordedEvent {
        var s = EnrollmentState(enrollmentRef: enrollmentRef)
        for e in events { s.apply(e) }
        return s
    }

    mutating func apply(_ recorded: RecordedEvent) {
        guard case .enrollment(let e) = recorded.event, e.enrollmentRef == enrollmentRef else { return }
        let slot = OrderState.insertionIndex(of: recorded.position, in: positions)
        if slot < positions.count && positions[slot] == recorded.position { return }
        positions.insert(recorded.position, at: slot)
        if updatedAt.map({ recorded.recordedAt > $0 }) ?? true { updatedAt = recorded.recordedAt }

        let phase: Phase
        switch e.callback {
        case BankPayCallbacks.bankAccountAdded:
            phase = .bankAccountAdded
            bankAccountAdded = true
            let id = e.payload["data"]?["intent_id"]?.scalarText
            if let id, intent.map({ recorded.position < $0.position }) ?? true { intent = (recorded.position, id) }
        case BankPayCallbacks.error:
            phase = .failed
            // The seed's shape nests the code in data: {type: "enrollmentError", data: {error, message}}.
            let fields = e.payload["error"] == nil ? (e.payload["data"] ?? e.payload) : e.payload
            let candidate = (e.observedAt, recorded.position, fields["error"]?.stringValue, fields["message"]?.stringValue)
            if newestError.map({ Self.isNewer(candidate.0, candidate.1, than: $0.observedAt, $0.position) }) ?? true {
                newestError = candidate
            }
        case BankPayCallbacks.close:
            phase = .closed
        default:
            phase = .started
        }
        if newest.map({ Self.isNewer(e.observedAt, recorded.position, than: $0.observedAt, $0.position) }) ?? true {
            newest = (e.observedAt, recorded.position, phase)
        }
        self.phase = newest?.phase ?? .started
        intentId = intent?.id
        lastError = newestError?.code
        lastErrorMessage = newestError?.message
    }

    static func isNewer(_ t: Timestamp, _ p: Int64, than t2: Timestamp, _ p2: Int64) -> Bool {
        t != t2 ? t > t2 : p > p2
    }

    public func toJSON() -> JSONValue {
        .object([
            ("enrollmentRef", .string(enrollmentRef)),
            ("phase", .string(phase.rawValue)),
            ("bankAccountAdded", .bool(bankAccountAdded)),
            ("intentId", intentId.map(JSONValue.string) ?? .null),
            ("lastError", lastError.map(JSONValue.string) ?? .null),
            ("lastErrorMessage", lastErrorMessage.map(JSONValue.string) ?? .null),
            ("updatedAt", updatedAt.map { .string($0.rfc3339) } ?? .null),
            ("eventCount", .integer(eventCount)),
            ("lastPosition", lastPosition.map { JSONValue.integer($0) } ?? .null),
        ])
    }
}
