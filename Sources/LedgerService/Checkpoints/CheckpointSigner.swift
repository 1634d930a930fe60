import LedgerCore
import LedgerPostgres

/// Why a checkpoint could not be made or kept.
public enum CheckpointError: Error, CustomStringConvertible {
    case cannotWrite(String, String)
    /// The newest stored note this key signed no longer describes the log: its event is
    /// gone, or the chain's hash there is another (the history up to it was rewritten).
    /// Nothing is signed (`NewestNoteCheck`).
    case noteContradicted(position: Int64, found: String)

    /// The stored notes and the log disagree: no retry will sign until someone looks.
    public var contradictsLog: Bool {
        if case .noteContradicted = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason): return "cannot write the checkpoint file \(path): \(reason)"
        case .noteContradicted(let position, let found):
            return "the newest checkpoint note of this key, at position \(position), no longer matches the log (\(found)): "
                + "nothing was signed; run `ledger verify --checkpoints` with the notes kept elsewhere"
        }
    }
}

/// Signs the chain's head as a checkpoint note (shared/spec/audit.md, *Making
/// checkpoints*), stores it in ledger.signed_checkpoints and copies it to
/// `LEDGER_CHECKPOINT_DIR`. The key stays inside; nothing here logs it.
public struct CheckpointSigner: Sendable {
    public let key: Ed25519SigningKey
    public let origin: String
    let directory: CheckpointDirectory?
    let store = CheckpointStore()

    public init(key: Ed25519SigningKey, origin: String, directory: CheckpointDirectory?) {
        self.key = key
        self.origin = origin
        self.directory = directory
    }

    /// The signer the configuration asks for; nil without `LEDGER_CHECKPOINT_KEY`. A key or
    /// folder it cannot use is a `ConfigurationError` (exit 2), found before anything runs.
    public static func configured(_ configuration: CheckpointConfiguration) throws -> CheckpointSigner? {
        guard let path = configuration.keyPath else {
            // A folder named without a key still has to be one this user can write: a wrong
            // path is found now, not when a key is added.
            _ = try configuration.directory.map { try CheckpointDirectory(path: $0) }
            return nil
        }
        let key = try CheckpointKeyFile.load(path: path)
        return CheckpointSigner(key: key, origin: configuration.origin,
                                directory: try configuration.directory.map { try CheckpointDirectory(path: $0) })
    }

    /// The signer, or a `ConfigurationError` saying a key is needed.
    public static func required(_ configuration: CheckpointConfiguration) throws -> CheckpointSigner {
        guard let signer = try configured(configuration) else {
            throw ConfigurationError.missing("LEDGER_CHECKPOINT_KEY",
                                             hint: "the path of the Ed25519 signing key; `ledger keys generate --out DIR` makes one")
        }
        return signer
    }

    public enum Outcome: Sendable, Equatable {
        /// A new note, stored.
        case signed(Checkpoint)
        /// The head has not moved since this stored note.
        case unchanged(StoredCheckpoint)
        /// A new note, handed out (and written to the folder unless a note of another key is
        /// there for its position) but not stored: a row whose note does not verify under this
        /// key (a retired key's note, or one written outside the ledger) holds its position in
        /// ledger.signed_checkpoints.
        case unstored(Checkpoint)
        /// An empty ledger has no checkpoint.
        case empty
    }

    /// The check that comes before anything signs the head (`NewestNoteCheck`).
    package var newestNote: NewestNoteCheck { NewestNoteCheck(publicKey: key.publicKey, directory: directory) }

    /// Signers (serve's loop, `ledger checkpoint`) take turns under this advisory lock, held
    /// by one transaction from finding the newest note to storing theirs: a signer never
    /// walks from a note older than one another signer stored meanwhile (beside the append
    /// lock 7413001 and the migrations' 7413002). A failure rolls back and lets go of it.
    static let signingLockKey: Int64 = 7413003

    /// Signs the head the chain reaches from the key's newest note (in the table or the
    /// folder), unless that note is the head's (`NewestNoteCheck`;
    /// `CheckpointError.noteContradicted` when the chain no longer reaches the head from it:
    /// a log rewritten below the note is never signed as if it were the same history).
    public func checkpoint(on connection: PostgresConnection, now: Timestamp = .now()) throws -> Outcome {
        try connection.transaction { c in
            try c.query("SELECT pg_advisory_xact_lock($1)", [.int(Self.signingLockKey)])
            return try signWalkedHead(on: c, now: now)
        }
    }

    private func signWalkedHead(on connection: PostgresConnection, now: Timestamp) throws -> Outcome {
        let anchored = try newestNote.run(on: connection)
        guard anchored.head > 0 else { return .empty }
        if let newest = anchored.note, newest.position >= anchored.head {
            try directory?.write(newest.note, position: newest.position)
            return .unchanged(newest)
        }
        let checkpoint = sign(position: anchored.head, hash: anchored.headHash, now: now)
        guard try store.insert(checkpoint, on: connection) else {
            // The position is stored already: a row whose note does not verify under this
            // key (another signer of this key cannot have stored it: the lock).
            try directory?.writeUnlessTaken(checkpoint.note.text, position: anchored.head)
            return .unstored(checkpoint)
        }
        try directory?.write(checkpoint.note.text, position: anchored.head)
        return .signed(checkpoint)
    }

    /// A note for `position` and `hash`, not stored (an export's own note).
    public func sign(position: Int64, hash: [UInt8], now: Timestamp = .now()) -> Checkpoint {
        Checkpoint.sign(CheckpointBody(origin: origin, position: position, hash: hash, signedAt: now), key: key)
    }

    /// An export's manifest with its `checkpoint` and `signature` notes.
    public func signed(_ manifest: JSONValue, now: Timestamp = .now()) -> JSONValue {
        ExportSignature.sign(manifest, origin: origin, key: key, now: now)
    }

    public var verifierKey: String { SignedNote.verifierKey(name: origin, publicKey: key.publicKey) }
}
