import LedgerCore
import LedgerPostgres

/// `ledger verify`'s second look at signed deliveries: every event verified by a
/// provider signature is checked again from its stored raw bytes and the signature
/// headers kept with it, with the keys configured now (`LEDGER_WEB3_API_KEYS`,
/// `LEDGER_BANXA_API_SECRETS`). A rewrite of the raw bytes that recomputed the hash
/// chain still fails here, unless the rewriter also holds the provider's key. An event
/// signed with a key no longer configured (its recorded fingerprint names none of them)
/// cannot be checked: when the auditor accepts that fingerprint as a retired key's
/// (`ledger verify --retired-keys`) it is counted, with the fingerprint, not failed;
/// otherwise it fails, counted by fingerprint, since the fingerprint is only what the
/// metadata says, and a rewriter can write any.
package struct SignatureRecheck: Sendable {
    package let web3Keys: [String]
    package let banxaSecrets: [String]
    /// Fingerprints of keys rotated out that the auditor accepts as such (`--retired-keys`).
    package let retiredKeyIds: Set<String>
    private let web3: StoredSignature.Keys
    private let banxa: StoredSignature.Keys

    /// What the recheck found, by provider.
    package struct Tally: Sendable, Equatable {
        package var matched = 0
        package var mismatched = 0
        /// Signed events that could not be checked: no key configured for their provider.
        package var unchecked = 0
        /// Signed events no configured key matches whose recorded key (`keyId` in their
        /// metadata, the fingerprint of the key that verified them) is not configured now:
        /// a key rotated out. Not checked, and not failures; the line names the fingerprints.
        package var uncheckedRetired = 0
        /// Those keys' fingerprints (at most `retiredKeysShown`), and whether there were more.
        package var retiredKeyIds: Set<String> = []
        package var moreRetiredKeys = false
        /// Signed events no configured key matches whose recorded fingerprint is neither
        /// configured nor accepted as retired: failures (`unaccepted` names them).
        package var unacceptedKey = 0
    }

    /// A fingerprint neither configured nor accepted as retired, and the events that name it.
    package struct UnacceptedKey: Sendable, Equatable {
        package var provider: String
        package var keyId: String
        package var events: Int
        package var firstPosition: Int64

        package var text: String {
            "\(events) \(provider) webhook event(s) (the first at position \(firstPosition)) name key fingerprint \(keyId), which is "
                + "neither configured nor accepted as a retired key's: configure the key to check them, or accept it with --retired-keys \(keyId)"
        }
    }

    /// How many distinct unaccepted fingerprints are kept to be named; the rest are counted.
    static let unacceptedKeysKept = 20
    package private(set) var unaccepted: [UnacceptedKey] = []
    package private(set) var moreUnaccepted = 0

    /// How many fingerprints of keys not configured a line names.
    static let retiredKeysShown = 5

    package private(set) var tallies: [String: Tally] = [:]
    /// Webhook events whose metadata records no signature to check again: the service
    /// keeps one with every webhook it takes, so the evidence was removed.
    package private(set) var unsignedWebhooks = 0
    /// Every event that fails, in the order found (kept as parts: a recheck with the wrong
    /// key fails every event, and each is named).
    package private(set) var failures: [Failure] = []

    /// An event whose signature no longer holds, or a webhook event with none to check.
    package struct Failure: Sendable, Equatable {
        package var position: Int64
        /// The provider whose signature it was; nil when the metadata names none.
        package var provider: String?
        package var why: String

        package var text: String { "event \(position) (\(provider.map { $0 + " " } ?? "")webhook): \(why)" }
    }

    package init(web3Keys: [String], banxaSecrets: [String], retiredKeyIds: Set<String> = []) {
        self.web3Keys = web3Keys
        self.banxaSecrets = banxaSecrets
        self.retiredKeyIds = retiredKeyIds
        web3 = StoredSignature.Keys(web3Keys)
        banxa = StoredSignature.Keys(banxaSecrets)
    }

    package init(_ configuration: ServiceConfiguration, retiredKeyIds: Set<String> = []) {
        self.init(web3Keys: configuration.web3APIKeys, banxaSecrets: configuration.banxaAPISecrets, retiredKeyIds: retiredKeyIds)
    }

    /// Checks the stored event at `position`, its metadata column parsed (`metadata`) and
    /// its raw body `raw` (taken only when the event was signed). Events not verified by a
    /// signature are passed over, unless their `source` column says they came from a
    /// webhook: such an event without its signature is a failure.
    package mutating func check(position: Int64, source: @autoclosure () -> String, metadata: JSONValue,
                                raw: @autoclosure () -> [UInt8]?) {
        guard metadata["verifiedBy"]?.stringValue == "signature", let signedWith = metadata["signedWith"] else {
            if source() == EventSource.webhook.rawValue {
                unsignedWebhooks += 1
                let verifiedBy = metadata["verifiedBy"]?.stringValue.map { "verifiedBy \($0)" } ?? "no verifiedBy"
                fail(position, nil, "it came from a webhook, but its metadata records no signature to check again (\(verifiedBy))")
            }
            return
        }
        guard let provider = StoredSignature.provider(of: signedWith) else {
            fail(position, nil, "its metadata records no signature headers a recheck can read")
            return
        }
        let raw = raw() ?? []
        let keys = provider == Web3Webhook.provider ? web3 : banxa
        let verdict = provider == Web3Webhook.provider
            ? StoredSignature.web3(signedWith: signedWith, raw: raw, keys: keys)
            : StoredSignature.banxa(signedWith: signedWith, raw: raw, secrets: keys)
        var tally = tallies[provider] ?? Tally()
        // No configured key matches, and the key that verified the delivery (its fingerprint
        // recorded then) is not configured now: rotated out, so nothing here can check it.
        // Only a fingerprint the auditor accepts as a retired key's passes so.
        if verdict == .mismatch, let keyId = metadata["keyId"]?.stringValue, !keys.holds(keyId: keyId) {
            guard retiredKeyIds.contains(keyId) else {
                tally.unacceptedKey += 1
                tallies[provider] = tally
                unacceptedKey(provider, keyId, position)
                return
            }
            tally.uncheckedRetired += 1
            if tally.retiredKeyIds.count < Self.retiredKeysShown || tally.retiredKeyIds.contains(keyId) {
                tally.retiredKeyIds.insert(keyId)
            } else {
                tally.moreRetiredKeys = true
            }
            tallies[provider] = tally
            return
        }
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

    private mutating func fail(_ position: Int64, _ provider: String?, _ why: String) {
        failures.append(Failure(position: position, provider: provider, why: why))
    }

    private mutating func unacceptedKey(_ provider: String, _ keyId: String, _ position: Int64) {
        if let i = unaccepted.firstIndex(where: { $0.provider == provider && $0.keyId == keyId }) {
            unaccepted[i].events += 1
        } else if unaccepted.count < Self.unacceptedKeysKept {
            unaccepted.append(UnacceptedKey(provider: provider, keyId: keyId, events: 1, firstPosition: position))
        } else {
            moreUnaccepted += 1
        }
    }

    /// The events that fail: signatures that do not hold, webhook events without one, and
    /// events signed with a key neither configured nor accepted as retired.
    package var mismatched: Int { failures.count + unaccepted.reduce(moreUnaccepted) { $0 + $1.events } }

    /// Each failure's line: every failing event, then each unaccepted fingerprint.
    package var failureLines: [String] {
        failures.map(\.text) + unaccepted.map(\.text)
            + (moreUnaccepted > 0 ? ["\(moreUnaccepted) more webhook event(s) name other fingerprints neither configured nor accepted"] : [])
    }

    /// One line per provider: how many signatures were rechecked and how they fared.
    package var lines: [String] {
        tallies.keys.sorted().map { provider in
            let t = tallies[provider]!
            var line = "\(provider) signatures: \(t.matched) match"
            if t.mismatched > 0 { line += ", \(t.mismatched) do not" }
            if t.unchecked > 0 { line += ", \(t.unchecked) not checked (no key configured)" }
            if t.unacceptedKey > 0 { line += ", \(t.unacceptedKey) name a key neither configured nor accepted as retired" }
            if t.uncheckedRetired > 0 {
                line += ", \(t.uncheckedRetired) not checked (signed with a retired key: "
                    + t.retiredKeyIds.sorted().joined(separator: ", ") + (t.moreRetiredKeys ? " and others" : "") + ")"
            }
            return line
        } + (unsignedWebhooks > 0 ? ["webhook events without a signature to check: \(unsignedWebhooks)"] : [])
    }
}
