import LedgerCore
import LedgerPostgres

/// What must hold before the chain's head is signed again (`ledger checkpoint`, the notes
/// `ledger serve` signs, a signed export's manifest): the newest note this key signed that
/// `ledger.signed_checkpoints` holds still matches the chain, its signed hash at its
/// position. A log rewritten below that note, its chain recomputed, is otherwise signed
/// again as if it were the same history. Rows this key did not sign (a retired key's, or
/// rows written by someone with the database's keys) prove nothing either way: they are
/// passed over, here and by `ledger rebuild`'s check of every stored note, which counts them.
package struct NewestNoteCheck: Sendable {
    package let publicKey: Ed25519PublicKey
    static let pageSize = 100

    package init(publicKey: Ed25519PublicKey) { self.publicKey = publicKey }

    /// The newest note of this key, checked against the chain; nil when none is
    /// stored. Throws `CheckpointError.noteContradicted` when the chain no longer has it.
    package func run(on connection: PostgresConnection) throws -> StoredCheckpoint? {
        let store = CheckpointStore()
        var before: Int64?
        while true {
            let page = try store.newestFirst(before: before, limit: Self.pageSize, on: connection)
            guard let last = page.last else { return nil }
            for row in page {
                guard let signed = Self.signed(row, by: publicKey) else { continue }
                try requireMatch(signed, on: connection)
                return row
            }
            before = last.position
        }
    }

    /// What the row's note signed, when it is a note of `publicKey` (under the origin its
    /// body names) for the position it is stored at; nil otherwise.
    static func signed(_ row: StoredCheckpoint, by publicKey: Ed25519PublicKey) -> CheckpointBody? {
        guard let checkpoint = Checkpoint(text: row.note), checkpoint.body.position == row.position,
              checkpoint.note.verifies(name: checkpoint.body.origin, publicKey: publicKey) else { return nil }
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
