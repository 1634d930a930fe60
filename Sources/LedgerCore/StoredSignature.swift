/// A stored webhook signature checked again, years later, from what the ledger kept:
/// the raw body and the signature headers as received (`signedWith` in the event's
/// metadata). Only the signature is checked, not the time window: an old delivery was
/// in its window when it arrived, and its event says when that was.
public enum StoredSignature {
    /// What a recheck found.
    public enum Verdict: Sendable, Equatable {
        /// The signature matches the raw bytes with the configured key of this fingerprint.
        case matches(keyId: String)
        /// No configured key signs these bytes this way: the bytes, the recorded
        /// signature, or the keys changed since it was verified.
        case mismatch
        /// No key for this provider is configured, so nothing can be checked.
        case noKeys
        /// `signedWith` does not hold what a check needs.
        case unreadable(String)
    }

    /// The provider whose signature `signedWith` records, by the headers it kept.
    public static func provider(of signedWith: JSONValue) -> String? {
        if signedWith["X-Pay-Signature"] != nil { return Web3Webhook.provider }
        if signedWith["nonce"] != nil, signedWith["signature"] != nil { return BanxaWebhook.provider }
        return nil
    }

    /// Keys made ready once for many rechecks, each with its fingerprint.
    public struct Keys: Sendable {
        let prepared: [HMACKey]
        let ids: [String]
        public var isEmpty: Bool { prepared.isEmpty }

        /// Whether one of these keys has the fingerprint `keyId` (`WebhookAuth.keyId`).
        public func holds(keyId: String) -> Bool { ids.contains(keyId) }

        public init(_ keys: [String]) {
            prepared = keys.map { HMACKey(Array($0.utf8)) }
            ids = keys.map(WebhookAuth.keyId)
        }
    }

    /// web3: HMAC-SHA256(key, X-Pay-Timestamp || raw) against X-Pay-Signature, any key.
    public static func web3(signedWith: JSONValue, raw: [UInt8], keys: [String]) -> Verdict {
        web3(signedWith: signedWith, raw: raw, keys: Keys(keys))
    }

    public static func web3(signedWith: JSONValue, raw: [UInt8], keys: Keys) -> Verdict {
        guard let timestamp = signedWith["X-Pay-Timestamp"]?.stringValue,
              let signature = signedWith["X-Pay-Signature"]?.stringValue else {
            return .unreadable("no X-Pay-Timestamp or X-Pay-Signature recorded")
        }
        return check(signature, prefix: Array(timestamp.utf8), message: raw, keys: keys)
    }

    /// Banxa: HMAC-SHA256(secret, "POST\n" path "\n" nonce "\n" raw) against the recorded
    /// signature, any secret.
    public static func banxa(signedWith: JSONValue, raw: [UInt8], secrets: [String]) -> Verdict {
        banxa(signedWith: signedWith, raw: raw, secrets: Keys(secrets))
    }

    public static func banxa(signedWith: JSONValue, raw: [UInt8], secrets: Keys) -> Verdict {
        guard let path = signedWith["path"]?.stringValue, let nonce = signedWith["nonce"]?.stringValue,
              let signature = signedWith["signature"]?.stringValue else {
            return .unreadable("no path, nonce or signature recorded")
        }
        return check(signature, prefix: [], message: BanxaWebhook.message(path: path, nonce: nonce, body: raw), keys: secrets)
    }

    /// Tries each key in turn; every comparison is constant-time.
    private static func check(_ signatureText: String, prefix: [UInt8], message: [UInt8], keys: Keys) -> Verdict {
        guard !keys.isEmpty else { return .noKeys }
        guard let signature = try? WebhookAuth.signatureBytes(WebhookAuth.trim(signatureText)) else {
            return .unreadable("the recorded signature is not 64 hexadecimal digits")
        }
        for (index, key) in keys.prepared.enumerated() where Crypto.constantTimeEqual(key.mac(prefix, message), signature) {
            return .matches(keyId: keys.ids[index])
        }
        return .mismatch
    }
}
