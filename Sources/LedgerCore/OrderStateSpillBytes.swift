/// The order state in a compact binary form, for a state set aside and read back by the
/// same process (`StateSpill`): the fields the storage form keeps (`storageJSON`), each
/// as it lies in memory (integers and times as 8 bytes in the machine's order, strings
/// with a 4-byte length, -1 for none), and the rest derived on reading, as
/// `init(storage:)` derives it. A fold that sets many states aside (orders paid long
/// after they were registered) spent more on rendering and parsing their JSON than on
/// reading the log. Not a storage format: it may change with any build, and nothing
/// outside the process reads it.
extension OrderState {
    private static let spillFormat: UInt8 = 1

    /// The state in the spill form; `init(spillBytes:)` gives back an equal state.
    public func spillBytes() -> [UInt8] {
        var w = SpillWriter(capacity: 256 + observations.count * 160 + positions.count * 8)
        w.byte(Self.spillFormat)
        w.string(merchantOrderNo.value)
        var sections: UInt8 = 0
        if registration != nil { sections |= 1 }
        if lastClientSignal != nil { sections |= 2 }
        if firstProvider != nil { sections |= 4 }
        w.byte(sections)
        if let r = registration {
            w.integer(r.position)
            w.string(r.provider); w.string(r.amount); w.string(r.asset)
            w.string(r.chainId); w.string(r.tokenId); w.string(r.fiatCurrency); w.string(r.fiatAmount)
            w.string(r.externalCustomerId); w.string(r.providerOrderId)
            w.time(r.registeredAt)
        }
        w.count(observations.count)
        for o in observations {
            w.integer(o.position)
            w.byte(UInt8(EventSource.allCases.firstIndex(of: o.source)!))
            w.string(o.provider)
            w.byte(UInt8(o.status.rawValue))
            w.string(o.providerStatus)
            w.time(o.observedAt)
            w.string(o.amount); w.string(o.asset); w.string(o.fiatAmount); w.string(o.fiatCurrency)
            w.string(o.txHash); w.string(o.providerOrderId)
        }
        w.count(adjustments.count)
        for a in adjustments {
            w.integer(a.position)
            w.string(a.kind); w.string(a.amount); w.string(a.asset)
            w.time(a.observedAt)
        }
        if let c = lastClientSignal {
            w.integer(c.position)
            w.string(c.provider); w.string(c.callback)
            w.bytes(JSONSerializer.bytes(c.payload))
            w.string(c.clientEventId)
            w.time(c.occurredAt)
            w.time(c.observedAt)
        }
        w.count(positions.count)
        for position in positions { w.integer(position) }
        if let f = firstProvider {
            w.integer(f.position)
            w.string(f.text)
        }
        w.time(firstObservedAt)
        w.time(updatedAt)
        return w.bytes
    }

    /// Reads back what `spillBytes()` wrote. Throws when the bytes are not such a form
    /// (cut short, or another build's), rather than read past them.
    public init(spillBytes b: UnsafeRawBufferPointer) throws(CoreError) {
        var r = SpillReader(b)
        guard try r.byte() == Self.spillFormat else { throw SpillReader.invalid("the spill form is another build's") }
        self.init(merchantOrderNo: try MerchantOrderNo(stored: try r.string()))
        let sections = try r.byte()
        if sections & 1 != 0 {
            registration = RegistrationFact(
                position: try r.integer(), provider: try r.string(), amount: try r.string(), asset: try r.string(),
                chainId: try r.optionalString(), tokenId: try r.optionalString(), fiatCurrency: try r.optionalString(),
                fiatAmount: try r.optionalString(), externalCustomerId: try r.optionalString(),
                providerOrderId: try r.optionalString(), registeredAt: try r.time())
        }
        let observationCount = try r.count()
        observations.reserveCapacity(observationCount)
        for _ in 0..<observationCount {
            let position = try r.integer()
            let sourceIndex = Int(try r.byte())
            guard sourceIndex < EventSource.allCases.count else { throw SpillReader.invalid("an observation's source") }
            let source = EventSource.allCases[sourceIndex]
            let provider = try r.string()
            guard let status = OrderStatus(rawValue: Int(try r.byte())) else { throw SpillReader.invalid("an observation's status") }
            observations.append(ObservationFact(
                position: position, source: source, provider: provider, status: status,
                providerStatus: try r.optionalString(), observedAt: try r.time(),
                amount: try r.optionalString(), asset: try r.optionalString(), fiatAmount: try r.optionalString(),
                fiatCurrency: try r.optionalString(), txHash: try r.optionalString(), providerOrderId: try r.optionalString()))
        }
        let adjustmentCount = try r.count()
        for _ in 0..<adjustmentCount {
            adjustments.append(AdjustmentFact(
                position: try r.integer(), kind: try r.string(), amount: try r.optionalString(),
                asset: try r.optionalString(), observedAt: try r.time()))
        }
        if sections & 2 != 0 {
            let position = try r.integer()
            let provider = try r.string(), callback = try r.string()
            let payloadBytes = try r.field()
            let payload: JSONValue
            do { payload = try JSONValue.parse(stored: payloadBytes.assumingMemoryBound(to: UInt8.self)) } catch {
                throw SpillReader.invalid("a client signal's payload")
            }
            lastClientSignal = ClientSignalFact(
                position: position, provider: provider, callback: callback, payload: payload,
                clientEventId: try r.string(), occurredAt: try r.optionalTime(), observedAt: try r.time())
        }
        let positionCount = try r.count()
        positions.reserveCapacity(positionCount)
        for _ in 0..<positionCount { positions.append(try r.integer()) }
        if sections & 4 != 0 {
            firstProvider = PositionedText(position: try r.integer(), text: try r.string())
        }
        firstObservedAt = try r.optionalTime()
        updatedAt = try r.optionalTime()
        guard r.atEnd else { throw SpillReader.invalid("bytes after the state") }
        deriveFromObservations()
        deriveRefunds()
        deriveIdentity()
    }
}

/// Appends the spill form's fields.
private struct SpillWriter {
    var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func integer(_ value: Int64) { withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) } }
    mutating func count(_ value: Int) { withUnsafeBytes(of: Int32(value)) { bytes.append(contentsOf: $0) } }
    mutating func time(_ value: Timestamp) { integer(value.microseconds) }
    /// A flag byte, then the time when there is one.
    mutating func time(_ value: Timestamp?) {
        byte(value == nil ? 0 : 1)
        if let value { time(value) }
    }
    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            count(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }
    mutating func string(_ value: String?) {
        if let value { string(value) } else { count(-1) }
    }
    mutating func bytes(_ value: [UInt8]) {
        count(value.count)
        bytes.append(contentsOf: value)
    }
}

/// Reads the spill form's fields, each checked against the bytes that are left.
private struct SpillReader {
    let b: UnsafeRawBufferPointer
    var at = 0

    init(_ b: UnsafeRawBufferPointer) { self.b = b }

    static func invalid(_ what: String) -> CoreError {
        .invalidEvent(type: "OrderState", reason: "a state set aside does not read back: \(what)")
    }

    var atEnd: Bool { at == b.count }

    mutating func take(_ n: Int) throws(CoreError) -> UnsafeRawBufferPointer {
        guard n >= 0, n <= b.count - at else { throw Self.invalid("cut short at byte \(at)") }
        defer { at += n }
        return UnsafeRawBufferPointer(rebasing: b[at..<(at + n)])
    }

    mutating func byte() throws(CoreError) -> UInt8 { try take(1)[0] }
    mutating func integer() throws(CoreError) -> Int64 { try take(8).loadUnaligned(as: Int64.self) }
    mutating func length() throws(CoreError) -> Int { Int(try take(4).loadUnaligned(as: Int32.self)) }
    mutating func count() throws(CoreError) -> Int {
        let n = try length()
        guard n >= 0, n <= b.count - at else { throw Self.invalid("a count of \(n) at byte \(at)") }
        return n
    }
    mutating func time() throws(CoreError) -> Timestamp { Timestamp(microseconds: try integer()) }
    mutating func optionalTime() throws(CoreError) -> Timestamp? {
        switch try byte() {
        case 0: return nil
        case 1: return try time()
        default: throw Self.invalid("a time's flag at byte \(at - 1)")
        }
    }
    mutating func field() throws(CoreError) -> UnsafeRawBufferPointer { try take(try count()) }
    mutating func string() throws(CoreError) -> String { String(decoding: try field(), as: UTF8.self) }
    mutating func optionalString() throws(CoreError) -> String? {
        let n = try length()
        if n == -1 { return nil }
        return String(decoding: try take(n), as: UTF8.self)
    }
}
