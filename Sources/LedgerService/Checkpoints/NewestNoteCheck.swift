import LedgerCore
import LedgerPostgres

/// What must hold before the chain's head is signed again (`ledger checkpoint`, the notes
/// `ledger serve` signs, a signed export's manifest): the newest note this key signed that
/// `ledger.signed_checkpoints` holds still matches the chain, its signed hash at its
/// position. A log rewritten below that note, its chain recomputed, is otherwise signed
/// again as if it were the same history. Rows this key and origin did not sign (another
/// key's, or rows written by someone with the database's keys) prove nothing either way:
/// they are passed over here, and `ledger rebuild` and `ledger verify --checkpoints` name them.
package struct NewestNoteCheck: Sendable {
    package let publicKey: Ed25519PublicKey
    package let origin: String
    static let pageSize = 100

    package init(publicKey: Ed25519PublicKey, origin: String) {
        self.publicKey = publicKey
        self.origin = origin
    }

    /// The newest note of this key and origin, checked against the chain; nil when none is
    /// stored. Throws `CheckpointError.noteContradicted` when the chain no longer has it.
    package func run(on connection: PostgresConnection) throws -> StoredCheckpoint? {
        let store = CheckpointStore()
        var before: Int64?
        while true {
            let page = try store.newestFirst(before: before, limit: Self.pageSize, on: connection)
            guard let last = page.last else { return nil }
            for row in page {
                guard let signed = signedHere(row) else { continue }
                try requireMatch(signed, on: connection)
                return row
            }
            before = last.position
        }
    }

    /// What the row's note signed, when it is a note of this key and origin for the position
    /// it is stored at; nil otherwise.
    func signedHere(_ row: StoredCheckpoint) -> CheckpointBody? {
        guard let checkpoint = Checkpoint(text: row.note), checkpoint.body.position == row.position,
              checkpoint.body.origin == origin, checkpoint.note.verifies(name: origin, publicKey: publicKey) else { return nil }
        return checkpoint.body
    }

    /// The chain's stored hash at the note's position must be the one it signed.
    private func requireMatch(_ signed: CheckpointBody, on connection: PostgresConnection) throws {
        guard let hash = try CheckpointStore().chainHashes(at: [signed.position], on: connection)[signed.position] else {
            throw CheckpointError.noteContradicted(position: signed.position, found: "no event is stored there")
        }
        if hash != signed.hash {
            throw CheckpointError.noteContradicted(
                position: signed.position,
                found: "the chain's hash there is \(Hex.encode(hash)), the note says \(Hex.encode(signed.hash))")
        }
    }
}
