import LedgerCore
import LedgerPostgres

/// `ledger verify`'s second look at signed deliveries: every event verified by a
/// provider signature is checked again from its stored raw bytes and the signature
/// headers kept with it, with the keys configured now (`LEDGER_WEB3_API_KEYS`,
/// `LEDGER_BANXA_API_SECRETS`). A rewrite of the raw bytes that recomputed the hash
/// chain still fails here, unless the rewriter also holds the provider's key.
package struct SignatureRecheck: Sendable {
    package let web3Keys: [String]
    package let banxaSecrets: [String]
    private let web3: StoredSignature.Keys
    private let banxa: StoredSignature.Keys

    /// What the recheck found, by provider.
    package struct Tally: Sendable, Equatable {
        package var matched = 0
        package var mismatched = 0
        /// Signed events that could not be checked: no key configured for their provider.
        package var unchecked = 0
    }

    package private(set) var tallies: [String: Tally] = [:]
    /// Each signed event whose signature no longer holds, in words (position, provider, why).
    package private(set) var failures: [String] = []
    /// How many of `failures` are kept in full; the rest are counted.
    package static let keptFailures = 1_000

    package init(web3Keys: [String], banxaSecrets: [String]) {
        self.web3Keys = web3Keys
        self.banxaSecrets = banxaSecrets
        web3 = StoredSignature.Keys(web3Keys)
        banxa = StoredSignature.Keys(banxaSecrets)
    }

    package init(_ configuration: ServiceConfiguration) {
        self.init(web3Keys: configuration.web3APIKeys, banxaSecrets: configuration.banxaAPISecrets)
    }

    /// Checks the stored event at `position`, its metadata column parsed (`metadata`) and
    /// its raw body `raw` (taken only when the event was signed); events not verified by a
    /// signature are passed over.
    package mutating func check(position: Int64, metadata: JSONValue, raw: @autoclosure () -> [UInt8]?) throws {
        guard metadata["verifiedBy"]?.stringValue == "signature", let signedWith = metadata["signedWith"] else { return }
        guard let provider = StoredSignature.provider(of: signedWith) else {
            fail(position, "signed", "its metadata records no signature headers a recheck can read")
            return
        }
        let raw = raw() ?? []
        let verdict = provider == Web3Webhook.provider
            ? StoredSignature.web3(signedWith: signedWith, raw: raw, keys: web3)
            : StoredSignature.banxa(signedWith: signedWith, raw: raw, secrets: banxa)
        var tally = tallies[provider] ?? Tally()
        switch verdict {
        case .matches:
            tally.matched += 1
        case .noKeys:
            tally.unchecked += 1
        case .mismatch:
            tally.mismatched += 1
            fail(position, provider, "its stored signature does not match its raw bytes with any configured key")
        case .unreadable(let why):
            tally.mismatched += 1
            fail(position, provider, why)
        }
        tallies[provider] = tally
    }

    private mutating func fail(_ position: Int64, _ provider: String, _ why: String) {
        guard failures.count < Self.keptFailures else { return }
        failures.append("event \(position) (\(provider) webhook): \(why)")
    }

    package var mismatched: Int { tallies.values.reduce(0) { $0 + $1.mismatched } }

    /// One line per provider: how many signatures were rechecked and how they fared.
    package var lines: [String] {
        tallies.keys.sorted().map { provider in
            let t = tallies[provider]!
            var line = "\(provider) signatures: \(t.matched) match"
            if t.mismatched > 0 { line += ", \(t.mismatched) do not" }
            if t.unchecked > 0 { line += ", \(t.unchecked) not checked (no key configured)" }
            return line
        }
    }
}
