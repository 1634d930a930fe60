import Foundation
import LedgerCore
import Testing

/// The note against a vector made by the `openssl` command line (Vectors/checkpoint/README.md):
/// Ed25519 is deterministic, so the same key and body must give the same bytes.
@Suite struct SignedNoteTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors/checkpoint")

    static func vector(_ name: String) throws -> String {
        try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
    }

    static func key() throws -> Ed25519SigningKey {
        try Ed25519SigningKey.fromPEM(Array(vector("key.pem").utf8))
    }

    static let body = CheckpointBody(origin: "example.com/ledger", position: 42, hash: Crypto.sha256(Array("head".utf8)),
                                     signedAt: Timestamp(seconds: 1_796_126_400))

    @Test func aCheckpointSignedInSwiftIsByteForByteTheNoteOpenSSLMade() throws {
        #expect(Self.body.text == (try Self.vector("body.txt")))
        let checkpoint = Checkpoint.sign(Self.body, key: try Self.key())
        #expect(checkpoint.note.text == (try Self.vector("note.txt")))
    }

    @Test func theVerifierKeyAndThePublicKeyAreTheOnesOpenSSLDerived() throws {
        let key = try Self.key()
        #expect(SignedNote.verifierKey(name: "example.com/ledger", publicKey: key.publicKey) + "\n" == (try Self.vector("verifier-key.txt")))
        let pub = try Ed25519PublicKey.fromPEM(Array(Self.vector("pub.pem").utf8))
        #expect(pub == key.publicKey)
        #expect(String(decoding: pub.spkiPEM, as: UTF8.self) == (try Self.vector("pub.pem")))
    }

    @Test func theOpenSSLNoteParsesAndVerifies() throws {
        let checkpoint = try #require(Checkpoint(text: try Self.vector("note.txt")))
        #expect(checkpoint.body == Self.body)
        #expect(checkpoint.note.verifies(name: "example.com/ledger", publicKey: try Self.key().publicKey))
    }

    @Test func aNoteWithAnyOneByteChangedFailsToVerify() throws {
        let text = Array(try Self.vector("note.txt").utf8)
        let pub = try Self.key().publicKey
        for i in text.indices {
            var edited = text
            edited[i] ^= 0x01
            guard let note = SignedNote(text: String(decoding: edited, as: UTF8.self)) else { continue }
            #expect(!note.verifies(name: "example.com/ledger", publicKey: pub), "byte \(i) changed, yet the note verifies")
        }
    }

    @Test func aNoteSignedByAnotherKeyFailsToVerify() throws {
        let other = Checkpoint.sign(Self.body, key: Ed25519SigningKey.generate())
        #expect(!other.note.verifies(publicKey: try Self.key().publicKey))
        #expect(SignedNote(text: other.note.text) == other.note)
    }

    /// Origins the configuration takes whose first or last character joins the space beside
    /// it into one Swift character: the note is read back by its bytes.
    @Test(arguments: ["\u{301}ledger", "ledger\u{600}", "\u{200D}ledger", "shop.example/\u{1F1E9}\u{1F1EA}", "ledger\u{1F1E9}"])
    func aNoteWhoseOriginJoinsTheSpaceBesideItParsesAndVerifies(origin: String) throws {
        let key = Ed25519SigningKey.generate()
        let body = CheckpointBody(origin: origin, position: 7, hash: Array(repeating: 3, count: 32), signedAt: Timestamp(seconds: 1_700_000_000))
        let signed = Checkpoint.sign(body, key: key)
        let read = try #require(Checkpoint(text: signed.note.text), "\(Array(signed.note.text.utf8))")
        #expect(read.note.name == origin && read.body == body)
        #expect(read.note.verifies(name: origin, publicKey: key.publicKey))
    }

    /// c2sp.org/signed-note: a note may carry several signature lines (a witness cosigning
    /// the checkpoint); a verifier of this key uses its own line and passes over the others.
    @Test func aNoteAWitnessCosignedStillVerifiesUnderTheLedgersKeyAndReadsBackAsItCame() throws {
        let key = Ed25519SigningKey.generate()
        let signed = Checkpoint.sign(Self.body, key: key)
        let witness = "\u{2014} witness.example/w1 " + Data((0..<76).map { UInt8($0) }).base64EncodedString() + "\n"
        for text in [signed.note.text + witness,
                     signed.note.text.replacingOccurrences(of: "\n\u{2014} ", with: "\n" + witness + "\u{2014} ")] {
            let read = try #require(Checkpoint(text: text), "\(text)")
            #expect(read.note.signatures.count == 2 && read.note.text == text)
            #expect(read.note.verifies(name: Self.body.origin, publicKey: key.publicKey))
            #expect(read.body == Self.body)
        }
        // The witness's line alone proves nothing under the ledger's key.
        let alone = try #require(SignedNote(text: Self.body.text + "\n" + witness))
        #expect(!alone.verifies(publicKey: key.publicKey))
        // A line that is not a signature line makes it no note.
        #expect(SignedNote(text: signed.note.text + "not a signature\n") == nil)
    }

    @Test func aGeneratedKeyRoundTripsThroughPKCS8AndSignsWhatItsPublicKeyVerifies() throws {
        let key = Ed25519SigningKey.generate()
        let again = try Ed25519SigningKey.fromPEM(key.pkcs8PEM)
        #expect(again.publicKey == key.publicKey)
        #expect(String(decoding: key.pkcs8PEM, as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(key.publicKey.verify(signature: again.sign([1, 2, 3]), of: [1, 2, 3]))
        #expect(!String(describing: key).contains("PRIVATE"))
    }

    @Test func aKeyOfAnotherTypeIsRefusedByName() throws {
        #expect(throws: KeyError.notPEM(what: "the key")) { try Ed25519SigningKey.fromPEM(Array("not a key".utf8)) }
    }

    /// The best of ten rounds, so other work on a shared machine does not decide the result.
    @Test func signingOneNoteTakesWellUnderAMillisecond() throws {
        let key = try Self.key()
        let count = 200
        var best = Duration.seconds(1)
        for _ in 0..<10 {
            let start = ContinuousClock.now
            for _ in 0..<count { _ = Checkpoint.sign(Self.body, key: key) }
            best = min(best, (ContinuousClock.now - start) / count)
        }
        print("signing one checkpoint note (body and signature): \(best)")
        #expect(best < .milliseconds(1))
    }
}
