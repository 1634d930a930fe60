import Foundation

/// A C2SP signed note (c2sp.org/signed-note): the body, an empty line, and one or more
/// signature lines `— <name> <base64(key id || signature)>`. The ledger signs with one
/// Ed25519 key (type 0x01); a note may come back with more lines (a witness's cosignature),
/// which a verifier of this key passes over. The signature covers the body's bytes, its
/// last LF included (shared/spec/audit.md, *The note*).
public struct SignedNote: Sendable, Equatable {
    /// The signed text: every line ends in LF.
    public let body: String
    /// Every signature line, in the note's order; the ledger's is the first of the notes it signs.
    public let signatures: [Signature]

    /// One signature line: the signer's name, its 4-byte key id, and what follows the key id.
    public struct Signature: Sendable, Equatable {
        public let name: String
        public let keyID: [UInt8]
        public let signature: [UInt8]
    }

    /// The first line's signer: the ledger's origin, on the notes it signs.
    public var name: String { signatures[0].name }

    static let signatureType: UInt8 = 0x01
    static let dash = "\u{2014} "

    /// Signs `body` as `name`; the body must end in LF and hold no empty line.
    public static func sign(body: String, name: String, key: Ed25519SigningKey) -> SignedNote {
        precondition(body.hasSuffix("\n") && !body.contains("\n\n"), "a note's body is whole lines with no empty one")
        return SignedNote(body: body, signatures: [Signature(name: name, keyID: keyID(name: name, publicKey: key.publicKey),
                                                             signature: key.sign(Array(body.utf8)))])
    }

    /// The key id of c2sp.org/signed-note: the first 4 bytes of SHA-256(name || LF || 0x01 || public key).
    public static func keyID(name: String, publicKey: Ed25519PublicKey) -> [UInt8] {
        Array(Crypto.sha256(Array(name.utf8) + [0x0A, signatureType] + publicKey.raw).prefix(4))
    }

    /// `<name>+<key id, 8 hex digits>+<base64(0x01 || public key)>`, what note verifiers are given.
    public static func verifierKey(name: String, publicKey: Ed25519PublicKey) -> String {
        name + "+" + Hex.encode(keyID(name: name, publicKey: publicKey)) + "+"
            + Data([signatureType] + publicKey.raw).base64EncodedString()
    }

    /// The note as it is stored, written to files and served.
    public var text: String {
        body + "\n" + signatures.map { Self.dash + $0.name + " " + Data($0.keyID + $0.signature).base64EncodedString() + "\n" }.joined()
    }

    /// Parses a note's text; nil when it is not a body, an empty line and signature lines.
    public init?(text: String) {
        let bytes = Array(text.utf8)
        guard bytes.last == 0x0A else { return nil }
        // The body ends at the last empty line: everything after it is signature lines.
        var split: Int?
        var i = bytes.count - 2
        while i > 0 {
            if bytes[i] == 0x0A && bytes[i - 1] == 0x0A { split = i; break }
            i -= 1
        }
        guard let split else { return nil }
        let body = String(decoding: bytes[..<split], as: UTF8.self)
        // Each line is read as bytes: Swift's characters would join a name that begins with a
        // combining mark (or ends with a prepended one) to the space beside it.
        let dash = Array(Self.dash.utf8)
        var signatures: [Signature] = []
        for line in bytes[(split + 1)..<(bytes.count - 1)].split(separator: 0x0A, omittingEmptySubsequences: false) {
            guard line.starts(with: dash) else { return nil }
            let words = line.dropFirst(dash.count).split(separator: 0x20, omittingEmptySubsequences: false)
            guard words.count == 2, !words[0].isEmpty,
                  let decoded = Data(base64Encoded: String(decoding: words[1], as: UTF8.self)), decoded.count > 4 else { return nil }
            signatures.append(Signature(name: String(decoding: words[0], as: UTF8.self), keyID: Array(decoded.prefix(4)),
                                        signature: Array(decoded.dropFirst(4))))
        }
        guard !signatures.isEmpty else { return nil }
        self.init(body: body, signatures: signatures)
    }

    init(body: String, signatures: [Signature]) {
        self.body = body
        self.signatures = signatures
    }

    /// True only when a line names `name` (any name when nil), carries this key's id, and its
    /// signature verifies; lines of other keys (a witness's) are passed over.
    public func verifies(name expected: String? = nil, publicKey: Ed25519PublicKey) -> Bool {
        signatures.contains { line in
            (expected == nil || line.name == expected) && line.signature.count == 64
                && line.keyID == Self.keyID(name: line.name, publicKey: publicKey)
                && publicKey.verify(signature: line.signature, of: Array(body.utf8))
        }
    }
}

/// A checkpoint's body in the c2sp.org/tlog-checkpoint format: origin, the head's
/// position, its hash (standard base64), and `time <RFC 3339 UTC>` (audit.md, *The note*).
public struct CheckpointBody: Sendable, Equatable {
    public var origin: String
    public var position: Int64
    public var hash: [UInt8]
    public var signedAt: Timestamp

    public init(origin: String, position: Int64, hash: [UInt8], signedAt: Timestamp) {
        self.origin = origin
        self.position = position
        self.hash = hash
        self.signedAt = signedAt
    }

    public var text: String {
        "\(origin)\n\(position)\n\(Data(hash).base64EncodedString())\ntime \(Self.rfc3339(signedAt))\n"
    }

    /// Reads a body back; nil when it is not the four lines above.
    public init?(text: String) {
        guard text.hasSuffix("\n") else { return nil }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count == 4, !lines[0].isEmpty, let position = Int64(lines[1]), position > 0,
              String(position) == lines[1],
              let hash = Data(base64Encoded: lines[2]), hash.count == 32,
              lines[3].hasPrefix("time "), let signedAt = Self.parseRFC3339(String(lines[3].dropFirst(5))) else { return nil }
        self.init(origin: lines[0], position: position, hash: Array(hash), signedAt: signedAt)
    }

    /// `2026-12-01T23:11:00Z`: whole seconds, UTC, so the line reads the same everywhere.
    static func rfc3339(_ time: Timestamp) -> String { Timestamp(seconds: time.seconds).rfc3339 }

    /// Only the form `rfc3339` writes, so a note has one spelling of its time.
    static func parseRFC3339(_ text: String) -> Timestamp? {
        guard let time = Timestamp.parse(text), rfc3339(time) == text else { return nil }
        return time
    }
}

/// A signed checkpoint: the body's values and the note that carries them.
public struct Checkpoint: Sendable, Equatable {
    public let body: CheckpointBody
    public let note: SignedNote

    public static func sign(_ body: CheckpointBody, key: Ed25519SigningKey) -> Checkpoint {
        Checkpoint(body: body, note: SignedNote.sign(body: body.text, name: body.origin, key: key))
    }

    /// Parses a note's text as a checkpoint; nil when it is not one (the signature is not checked here).
    public init?(text: String) {
        guard let note = SignedNote(text: text), let body = CheckpointBody(text: note.body) else { return nil }
        self.init(body: body, note: note)
    }

    init(body: CheckpointBody, note: SignedNote) {
        self.body = body
        self.note = note
    }
}
