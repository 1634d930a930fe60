import LedgerCore
import Testing

@Suite("Stored signatures checked again")
struct StoredSignatureTests {
    static let body = Array(#"{"merchantOrderNo":"SO-1","status":3}"#.utf8)

    static func web3SignedWith(_ key: String, timestamp: String = "1700000000") -> JSONValue {
        .object([("X-Pay-Timestamp", .string(timestamp)),
                 ("X-Pay-Signature", .string(Web3Webhook.signature(key: key, timestamp: timestamp, body: body)))])
    }

    @Test("a web3 signature matches its bytes with the key that made it, whatever the time, and with no other")
    func web3() {
        let signed = Self.web3SignedWith("k1")
        #expect(StoredSignature.provider(of: signed) == "web3")
        guard case .matches = StoredSignature.web3(signedWith: signed, raw: Self.body, keys: ["k0", "k1"]) else {
            Issue.record("the signing key is configured"); return
        }
        #expect(StoredSignature.web3(signedWith: signed, raw: Self.body, keys: ["k0"]) == .mismatch)
        #expect(StoredSignature.web3(signedWith: signed, raw: Self.body + [0x20], keys: ["k1"]) == .mismatch)
        #expect(StoredSignature.web3(signedWith: signed, raw: Self.body, keys: []) == .noKeys)
        if case .unreadable = StoredSignature.web3(signedWith: .object([]), raw: Self.body, keys: ["k1"]) {} else {
            Issue.record("no headers recorded is unreadable")
        }
    }

    @Test("a Banxa signature covers the path, the nonce and the bytes")
    func banxa() {
        let nonce = "1700000000000"
        let signature = BanxaWebhook.signature(secret: "s1", nonce: nonce, body: Self.body)
        let signed: JSONValue = .object([("path", .string(BanxaWebhook.path)), ("signature", .string(signature)), ("nonce", .string(nonce))])
        #expect(StoredSignature.provider(of: signed) == "banxa")
        guard case .matches = StoredSignature.banxa(signedWith: signed, raw: Self.body, secrets: ["s1"]) else {
            Issue.record("the signing secret is configured"); return
        }
        let otherNonce: JSONValue = .object([("path", .string(BanxaWebhook.path)), ("signature", .string(signature)), ("nonce", .string("1"))])
        #expect(StoredSignature.banxa(signedWith: otherNonce, raw: Self.body, secrets: ["s1"]) == .mismatch)
        #expect(StoredSignature.banxa(signedWith: signed, raw: Array(Self.body.dropLast()), secrets: ["s1"]) == .mismatch)
    }
}
