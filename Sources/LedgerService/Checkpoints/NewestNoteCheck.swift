import LedgerCore
import LedgerPostgres

/// What must hold before the chain's head is signed (`ledger checkpoint`, the notes
/// `ledger serve` signs, a signed export's manifest): the chain, walked from the newest
/// note this key signed (from the hash that note signed, through every event after it),
/// reaches the head. A log rewritten below that note, however its hashes were recomputed,
/// is otherwise signed as if it were the same history.
///
/// The note is the newer of two: the newest row of `ledger.signed_checkpoints` whose note
/// verifies under the key (wherever the row is stored), and the newest note in
/// `LEDGER_CHECKPOINT_DIR`, which someone with the database's keys cannot reach. Without
/// the folder, such a person can hide the newest notes from the table (delete or alter
/// their rows) and have a history rewritten after an older note signed; the folder, and
/// `ledger verify --checkpoints` with copies kept outside, are what stop that. Rows whose
/// note does not verify under the key prove nothing either way and are passed over, so
/// that no row anyone can insert stops the signing.
package struct NewestNoteCheck: Sendable {
    package let publicKey: Ed25519PublicKey
    package let directory: CheckpointDirectory?
    static let pageSize = 100
    /// Folder notes tried, highest position first, before the folder is given up on.
    static let folderTries = 16

    package init(publicKey: Ed25519PublicKey, directory: CheckpointDirectory? = nil) {
        self.publicKey = publicKey
        self.directory = directory
    }

    /// The newest note of this key (nil when there is none) and the head the chain was
    /// walked to from it: the head to sign. Without a note there is nothing to walk from,
    /// and the stored head is given as it is.
    package struct Anchored: Sendable {
        package let note: StoredCheckpoint?
        package let head: Int64
        package let headHash: [UInt8]
    }

    /// Throws `CheckpointError.noteContradicted` when the chain no longer reaches the head
    /// from the note. One statement reads the events after the note, so run it in the
    /// snapshot whose head is to be signed.
    package func run(on connection: PostgresConnection) throws -> Anchored {
        let candidates = [try newestStored(on: connection), newestInFolder()].compactMap { $0 }
        guard let anchor = candidates.max(by: { $0.body.position < $1.body.position }) else {
            let head = try EventStore().head(on: connection)
            return Anchored(note: nil, head: head.position, headHash: head.hash)
        }
        let signed = anchor.body
        guard let stored = try CheckpointStore().chainHashes(at: [signed.position], on: connection)[signed.position] else {
            throw CheckpointError.noteContradicted(position: signed.position, found: "no event is stored there")
        }
        if stored != signed.hash {
            throw CheckpointError.noteContradicted(position: signed.position,
                                                   found: "the chain's hash there is not the one the note signed")
        }
        var walk = ChainContinuation(head: signed.position, headHash: signed.hash)
        var scratch: [UInt8] = []
        try EventLogStream().run(after: signed.position, on: connection) { event in
            if case .broken(let position, let reason) = walk.check(event, scratch: &scratch) {
                throw CheckpointError.noteContradicted(position: signed.position,
                                                       found: "the chain after it breaks at position \(position): \(reason)")
            }
        }
        let note = StoredCheckpoint(position: signed.position, hash: signed.hash, signedAt: signed.signedAt, note: anchor.text)
        return Anchored(note: note, head: walk.head, headHash: walk.headHash)
    }

    /// A note of this key and what it signed.
    struct Found {
        let body: CheckpointBody
        let text: String
    }

    /// The first row, newest stored position first, whose note verifies under the key.
    private func newestStored(on connection: PostgresConnection) throws -> Found? {
        var before: Int64?
        while true {
            let page = try CheckpointStore().newestFirst(before: before, limit: Self.pageSize, on: connection)
            guard let last = page.last else { return nil }
            for row in page {
                if let body = Self.verified(row.note, by: publicKey) { return Found(body: body, text: row.note) }
            }
            before = last.position
        }
    }

    /// The folder's newest note that verifies under the key and is named for its position.
    private func newestInFolder() -> Found? {
        guard let directory else { return nil }
        for position in directory.positions().prefix(Self.folderTries) {
            if let text = directory.note(at: position), let body = Self.verified(text, by: publicKey), body.position == position {
                return Found(body: body, text: text)
            }
        }
        return nil
    }

    /// What `text` signed, when it is a checkpoint note that verifies under `publicKey`
    /// (under the origin its body names); nil otherwise.
    static func verified(_ text: String, by publicKey: Ed25519PublicKey) -> CheckpointBody? {
        guard let checkpoint = Checkpoint(text: text),
              checkpoint.note.verifies(name: checkpoint.body.origin, publicKey: publicKey) else { return nil }
        return checkpoint.body
    }
}
