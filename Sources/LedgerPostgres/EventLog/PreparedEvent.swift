import LedgerCore

/// An event made ready for the single writer by the thread that submits it.
///
/// Everything that does not depend on the event's place in the log is done
/// here, in parallel with other submitters: the payload and metadata rendered
/// exactly as jsonb prints them (JSONBText), an event id drawn, and the bytes of
/// its hashed content (ledger.event_content) and of its COPY row around the
/// fields the writer fills in (position, stream version, recorded time, hash).
///
/// A class: the writer hands a batch of these around several times (classify,
/// hash and copy, project), and one reference is cheaper to copy than the
/// event's five strings and its bytes.
public final class PreparedEvent: Sendable {
    public let event: NewEvent
    /// Nil when the payload or metadata is not JSON this side can render: a batch
    /// with such an item goes through ledger.append_events, whose error says why.
    let chain: ChainParts?

    /// The parts of one event's hashed content and COPY row. A class: the writer
    /// passes these around a batch at a time, and one reference is cheaper to copy
    /// than seven.
    final class ChainParts: Sendable {
        let eventID: String
        /// The payload as jsonb prints it: compared with a stored event's to tell a
        /// duplicate from a key conflict.
        let payloadText: [UInt8]
        /// Content after the position, before the stream version: event id, stream.
        let contentHead: [UInt8]
        /// Content after the stream version, before recorded_at: type, source,
        /// payload, raw, metadata, idempotency key.
        let contentBody: [UInt8]
        /// COPY fields event_id and stream.
        let copyHead: [UInt8]
        /// COPY fields type, source, payload, raw, metadata, idempotency_key.
        let copyBody: [UInt8]
        let observedMicros: Int64

        init(eventID: String, payloadText: [UInt8], contentHead: [UInt8], contentBody: [UInt8], copyHead: [UInt8],
             copyBody: [UInt8], observedMicros: Int64) {
            self.eventID = eventID
            self.payloadText = payloadText
            self.contentHead = contentHead
            self.contentBody = contentBody
            self.copyHead = copyHead
            self.copyBody = copyBody
            self.observedMicros = observedMicros
        }
    }

    /// The idempotency key's and the stream's fingerprints for the writer's probe hints,
    /// taken here so the writer does not hash the strings itself.
    let keyFingerprint: BloomFilter.Fingerprint
    let streamFingerprint: BloomFilter.Fingerprint

    public init(_ event: NewEvent) {
        self.event = event
        self.chain = Self.parts(event)
        keyFingerprint = BloomFilter.Fingerprint(event.idempotencyKey)
        streamFingerprint = BloomFilter.Fingerprint(event.stream)
    }

    private static func parts(_ e: NewEvent) -> ChainParts? {
        guard let payloadText = jsonbText(e.payloadJSON, rendered: e.renderedAsJSONB),
              let metadataText = jsonbText(e.metadataJSON, rendered: e.renderedAsJSONB) else { return nil }
        let id = timeOrderedUUID()
        let idText = uuidText(id)

        var contentHead = [UInt8]()
        contentHead.reserveCapacity(48 + e.stream.utf8.count)
        BinaryField.appendLengthPrefixed(&contentHead, idText)
        BinaryField.appendLengthPrefixed(&contentHead, e.stream)

        let raw = e.raw
        var contentBody = [UInt8]()
        contentBody.reserveCapacity(payloadText.count + metadataText.count + (raw?.count ?? 0) + 128)
        BinaryField.appendLengthPrefixed(&contentBody, e.type)
        BinaryField.appendLengthPrefixed(&contentBody, e.source)
        BinaryField.appendLengthPrefixed(&contentBody, payloadText)
        if let raw { BinaryField.appendLengthPrefixed(&contentBody, raw) } else { BinaryField.appendInt32(&contentBody, -1) }
        BinaryField.appendLengthPrefixed(&contentBody, metadataText)
        BinaryField.appendLengthPrefixed(&contentBody, e.idempotencyKey)

        // COPY BINARY: every field is a length then the type's binary form; jsonb's
        // is a version byte (1) then the text. The length prefixes of text fields
        // are the same as the content's, so the body is mostly the same bytes.
        var copyHead = [UInt8]()
        copyHead.reserveCapacity(24 + e.stream.utf8.count)
        BinaryField.appendLengthPrefixed(&copyHead, id)
        BinaryField.appendLengthPrefixed(&copyHead, e.stream)

        var copyBody = [UInt8]()
        copyBody.reserveCapacity(contentBody.count + 8)
        BinaryField.appendLengthPrefixed(&copyBody, e.type)
        BinaryField.appendLengthPrefixed(&copyBody, e.source)
        BinaryField.appendJSONB(&copyBody, payloadText)
        if let raw { BinaryField.appendLengthPrefixed(&copyBody, raw) } else { BinaryField.appendInt32(&copyBody, -1) }
        BinaryField.appendJSONB(&copyBody, metadataText)
        BinaryField.appendLengthPrefixed(&copyBody, e.idempotencyKey)

        return ChainParts(eventID: idText, payloadText: payloadText, contentHead: contentHead,
                          contentBody: contentBody, copyHead: copyHead, copyBody: copyBody,
                          observedMicros: e.observedAt.microseconds)
    }

    /// The text jsonb will print for `json`: the text itself when it is already in
    /// that form (rendered by JSONBText, or checked to be), else parsed and rendered.
    static func jsonbText(_ json: String, rendered: Bool = false) -> [UInt8]? {
        if rendered || JSONBText.isCanonical(json) { return Array(json.utf8) }
        guard let value = try? JSONValue.parse(stored: json) else { return nil }   // written by the ledger: may nest a request deeper
        return JSONBText.bytes(value)
    }

    /// A UUID version 7 (RFC 9562): the Unix time in milliseconds, then 74
    /// random bits. Ids made later sort later, so the unique index on event_id
    /// grows at its right edge like the position's, instead of taking every
    /// insert at a random leaf of a large tree.
    static func timeOrderedUUID(now: Timestamp = .now()) -> [UInt8] {
        // 48 bits of milliseconds, then 80 random bits (74 once the version and variant are set).
        let millis = UInt64(max(0, now.microseconds / 1_000))
        var b = [UInt8]()
        b.reserveCapacity(16)
        for i in 0..<6 { b.append(UInt8(truncatingIfNeeded: millis >> (8 * (5 - i)))) }
        b.append(contentsOf: RandomPool.shared.bytes(10))
        b[6] = (b[6] & 0x0f) | 0x70
        b[8] = (b[8] & 0x3f) | 0x80
        return b
    }

    /// The text form PostgreSQL prints for a uuid: lowercase, 8-4-4-4-12.
    static func uuidText(_ b: [UInt8]) -> String {
        precondition(b.count == 16)
        return String(unsafeUninitializedCapacity: 36) { out in
            var n = 0
            for (i, byte) in b.enumerated() {
                if i == 4 || i == 6 || i == 8 || i == 10 { out[n] = UInt8(ascii: "-"); n += 1 }
                out[n] = hexDigit(byte >> 4)
                out[n + 1] = hexDigit(byte & 0xf)
                n += 2
            }
            return n
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}

/// Big-endian integers and length-prefixed fields: the encoding shared by
/// ledger.event_content and PostgreSQL's binary COPY format.
enum BinaryField {
    static func appendInt16(_ out: inout [UInt8], _ v: Int16) {
        withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
    }

    static func appendInt32(_ out: inout [UInt8], _ v: Int32) {
        withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
    }

    static func appendInt64(_ out: inout [UInt8], _ v: Int64) {
        withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
    }

    static func appendLengthPrefixed(_ out: inout [UInt8], _ bytes: [UInt8]) {
        appendInt32(&out, Int32(truncatingIfNeeded: bytes.count))
        out.append(contentsOf: bytes)
    }

    /// A string's UTF-8, length-prefixed, without an intermediate array.
    static func appendLengthPrefixed(_ out: inout [UInt8], _ text: String) {
        appendInt32(&out, Int32(truncatingIfNeeded: text.utf8.count))
        out.append(contentsOf: text.utf8)
    }

    /// A jsonb field of binary COPY: length, version byte 1, the JSON text.
    static func appendJSONB(_ out: inout [UInt8], _ text: [UInt8]) {
        appendInt32(&out, Int32(truncatingIfNeeded: text.count + 1))
        out.append(1)
        out.append(contentsOf: text)
    }
}
