import LedgerCore
import LedgerPostgres

/// Why a checkpoint could not be made or kept.
public enum CheckpointError: Error, CustomStringConvertible {
    case cannotWrite(String, String)
    /// The newest stored note this key signed no longer describes the log: its event is
    /// gone, or the chain's hash there is another (the history up to it was rewritten).
    /// Nothing is signed (`NewestNoteCheck`).
    case noteContradicted(position: Int64, found: String)
    /// The head's position holds a stored note this key did not sign (a retired key's, or a
    /// row written outside the ledger): nothing is signed until the head moves.
    case positionTaken(Int64)

    /// The stored notes and the log disagree: no retry will sign until someone looks.
    public var contradictsLog: Bool {
        if case .noteContradicted = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason): return "cannot write the checkpoint file \(path): \(reason)"
        case .noteContradicted(let position, let found):
            return "the newest stored checkpoint note, at position \(position), no longer matches the log (\(found)): "
                + "nothing was signed; run `ledger verify --checkpoints` with the notes kept elsewhere"
        case .positionTaken(let position):
            return "ledger.signed_checkpoints already holds a note for position \(position) that this key did not sign "
                + "(another key's, or a row written outside the ledger): nothing was signed; a note is signed once the head moves"
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
    let events = EventStore()

    public init(key: Ed25519SigningKey, origin: String, directory: CheckpointDirectory?) {
        self.key = key
        self.origin = origin
        self.directory = directory
    }

    /// The signer the configuration asks for; nil without `LEDGER_CHECKPOINT_KEY`. A key or
    /// folder it cannot use is a `ConfigurationError` (exit 2), found before anything runs.
    public static func configured(_ configuration: CheckpointConfiguration) throws -> CheckpointSigner? {
        guard let path = configuration.keyPath else { return nil }
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
        /// An empty ledger has no checkpoint.
        case empty
    }

    /// The check that comes before anything signs the head (`NewestNoteCheck`).
    package var newestNote: NewestNoteCheck { NewestNoteCheck(publicKey: key.publicKey) }

    /// Signs the current head unless the newest note this key stored already covers it.
    /// That note must still match the log first (`CheckpointError.noteContradicted`): a log
    /// rewritten below it, its chain recomputed, is never signed again as if it were the same
    /// history, and a note is never handed out for a head it does not describe.
    public func checkpoint(on connection: PostgresConnection, now: Timestamp = .now()) throws -> Outcome {
        let head = try events.head(on: connection)
        let newest = try newestNote.run(on: connection)   // at or below the head, once it holds
        guard head.position > 0 else { return .empty }
        if let newest, newest.position >= head.position {
            try directory?.write(newest.note, position: newest.position)
            return .unchanged(newest)
        }
        let checkpoint = sign(position: head.position, hash: head.hash, now: now)
        guard try store.insert(checkpoint, on: connection) else {
            // Another signer stored this position first: its note is the one kept, if it is
            // ours (or one of ours already covers a later head).
            guard let newest = try newestNote.run(on: connection), newest.position >= head.position else {
                throw CheckpointError.positionTaken(head.position)
            }
            return .unchanged(newest)
        }
        try directory?.write(checkpoint.note.text, position: head.position)
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
