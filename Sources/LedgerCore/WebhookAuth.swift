/// The outcome of a signature check: which configured key matched and the signed time.
public struct WebhookVerification: Sendable, Hashable {
    /// Index of the matching key in the configured list.
    public var keyIndex: Int
    /// A fingerprint of the key (first 8 hex digits of its SHA-256), safe to store and log.
    public var keyId: String
    /// The time the sender signed (web3 timestamp header, Banxa nonce).
    public var signedAt: Timestamp

    /// The fingerprint `keyId` records for `key`.
    public static func keyId(of key: String) -> String { WebhookAuth.keyId(key) }

    public init(keyIndex: Int, keyId: String, signedAt: Timestamp) {
        self.keyIndex = keyIndex
        self.keyId = keyId
        self.signedAt = signedAt
    }
}

/// Shared pieces of webhook authentication.
enum WebhookAuth {
    /// Looks a header up by lowercased name, falling back to a case-insensitive scan.
    static func header(_ headers: [String: String], _ name: String) -> String? {
        if let v = headers[name] { return trim(v) }
        for (k, v) in headers where k.lowercased() == name { return trim(v) }
        return nil
    }

    static func trim(_ s: String) -> String {
        let utf8 = s.utf8
        func blank(_ c: UInt8?) -> Bool { c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") }
        if !blank(utf8.first) && !blank(utf8.last) { return s }   // the common case: nothing to trim
        var sub = Substring(s)
        while let f = sub.first, f == " " || f == "\t" { sub.removeFirst() }
        while let l = sub.last, l == " " || l == "\t" { sub.removeLast() }
        return String(sub)
    }

    static func keyId(_ key: String) -> String {
        String(Hex.encode(Crypto.sha256(Array(key.utf8))).prefix(8))
    }

    /// Decodes a hex signature of exactly 32 bytes.
    static func signatureBytes(_ text: String) throws(CoreError) -> [UInt8] {
        guard text.utf8.count == 64, let bytes = Hex.decode(text) else {
            throw .malformedSignature("it must be 64 hexadecimal digits (HMAC-SHA256)")
        }
        return bytes
    }

    /// Unix time digits to an instant; `unit` picks seconds, ms or µs by digit count.
    static func digits(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }

    /// Enforces the tolerance in both directions.
    static func checkWindow(_ signed: Timestamp, now: Timestamp, toleranceSeconds: Int64) throws(CoreError) {
        let tolerance = max(0, toleranceSeconds)
        let skew = signed.microseconds &- now.microseconds
        let limit = tolerance &* 1_000_000
        if skew < -limit { throw .staleTimestamp(skewSeconds: (-skew) / 1_000_000, toleranceSeconds: tolerance) }
        if skew > limit { throw .futureTimestamp(skewSeconds: skew / 1_000_000, toleranceSeconds: tolerance) }
    }

    /// Tries each key in turn; every comparison is constant-time.
    static func matchKey(_ keys: [String], signature: [UInt8], message: [UInt8]) throws(CoreError) -> Int {
        guard !keys.isEmpty else { throw .noKeysConfigured }
        for (index, key) in keys.enumerated() {
            let mac = Crypto.hmacSHA256(key: Array(key.utf8), message: message)
            if Crypto.constantTimeEqual(mac, signature) { return index }
        }
        throw .badSignature
    }

    /// "provider:" + hex SHA-256 of the raw body: a retried delivery with a
    /// new timestamp or nonce still hashes the same.
    static func bodyKey(_ provider: String, _ body: [UInt8]) -> String {
        provider + ":" + Hex.encode(Crypto.sha256(body))
    }
}
