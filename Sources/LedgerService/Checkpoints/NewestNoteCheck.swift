import LedgerCore
import LedgerPostgres

/// What must hold before the chain's head is signed (`ledger checkpoint`, the notes
/// `ledger serve` signs, a signed export's manifest): the chain, walked from the newest
/// note this key stored in `ledger.signed_checkpoints` (from the hash that note signed,
/// through every event after it), reaches the head. A log rewritten below that note,
/// however its hashes were recomputed, is otherwise signed as if it were the same history.
/// Rows that are not a verifying note of this key (a retired key's notes, rows written
/// outside the ledger, a row naming this key whose note does not verify) prove nothing
/// either way and are passed over here, so that no row anyone can insert stops the
/// signing; `ledger rebuild`'s check of every stored note fails a row naming this key
/// that does not verify, and counts the others.
package struct NewestNoteCheck: Sendable {
    package let publicKey: Ed25519PublicKey
    static let pageSize = 100

    package init(publicKey: Ed25519PublicKey) { self.publicKey = publicKey }

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
        guard let (row, signed) = try newest(on: connection) else {
            let head = try EventStore().head(on: connection)
            return Anchored(note: nil, head: head.position, headHash: head.hash)
        }
        guard let stored = try CheckpointStore().chainHashes(at: [signed.position], on: connection)[signed.position] else {
            throw CheckpointError.noteContradicted(position: signed.position, found: "no event is stored there")
        }
        if stored != signed.hash {
            throw CheckpointError.noteContradicted(
                position: signed.position,
                found: "the chain's hash there is \(Hex.encode(stored)), the note says \(Hex.encode(signed.hash))")
        }
        var walk = ChainContinuation(head: signed.position, headHash: signed.hash)
        var scratch: [UInt8] = []
        try EventLogStream().run(after: signed.position, on: connection) { event in
            if case .broken(let position, let reason) = walk.check(event, scratch: &scratch) {
                throw CheckpointError.noteContradicted(position: signed.position,
                                                       found: "the chain after it breaks at position \(position): \(reason)")
            }
        }
        return Anchored(note: row, head: walk.head, headHash: walk.headHash)
    }

    /// The newest row of this key, with what its note signed.
    private func newest(on connection: PostgresConnection) throws -> (StoredCheckpoint, CheckpointBody)? {
        var before: Int64?
        while true {
            let page = try CheckpointStore().newestFirst(before: before, limit: Self.pageSize, on: connection)
            guard let last = page.last else { return nil }
            for row in page {
                if case .signed(let body) = Self.read(row, by: publicKey) { return (row, body) }
            }
            before = last.position
        }
    }

    /// A stored row as this key sees it.
    enum Row {
        /// A note of this key for the position it is stored at, and what it signed.
        case signed(CheckpointBody)
        /// A row naming this key (its key id) whose note does not verify, or is stored at
        /// another position than it names: altered after it was signed.
        case altered
        /// Another key's note, or no note at all.
        case foreign
    }

    static func read(_ row: StoredCheckpoint, by publicKey: Ed25519PublicKey) -> Row {
        guard let checkpoint = Checkpoint(text: row.note) else {
            // Unreadable as a checkpoint: this key's only if its signature line still names it.
            guard let note = SignedNote(text: row.note),
                  note.keyID == SignedNote.keyID(name: note.name, publicKey: publicKey) else { return .foreign }
            return .altered
        }
        let ours = checkpoint.note.keyID == SignedNote.keyID(name: checkpoint.note.name, publicKey: publicKey)
        guard ours else { return .foreign }
        guard checkpoint.body.position == row.position,
              checkpoint.note.verifies(name: checkpoint.body.origin, publicKey: publicKey) else { return .altered }
        return .signed(checkpoint.body)
    }
}
