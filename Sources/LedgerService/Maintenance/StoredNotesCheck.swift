import LedgerCore
import LedgerPostgres

/// The checkpoint notes the service signed and stored (`ledger.signed_checkpoints`),
/// checked against the chain as it is now under the public half of the checkpoint key:
/// what `ledger rebuild` does before it folds, so that a log whose chain was recomputed
/// after a note was signed is refused, as the walk of the chain alone cannot. A note row
/// deleted with the triggers off escapes it; copies kept elsewhere do not
/// (`ledger verify --checkpoints`).
package struct StoredNotesCheck {
    package let publicKey: Ed25519PublicKey
    static let pageSize = 1_000

    package init(publicKey: Ed25519PublicKey) { self.publicKey = publicKey }

    /// The report on the notes this key signed, and how many rows it did not sign (a
    /// retired key's notes, or rows someone with the database's keys wrote): those prove
    /// nothing either way and are passed over, so that a new key does not stop rebuilds.
    package func run(on c: PostgresConnection) throws -> (report: CheckpointVerification.Report, passedOver: Int) {
        var notes: [CheckpointVerification.NoteFile] = []
        var passedOver = 0
        var after: Int64 = 0
        while true {
            let page = try CheckpointStore().list(after: after, limit: Self.pageSize, on: c)
            guard let last = page.last else { break }
            for row in page {
                if case .foreign = NewestNoteCheck.read(row, by: publicKey) { passedOver += 1; continue }
                notes.append(CheckpointVerification.NoteFile(path: "ledger.signed_checkpoints", text: row.note))
            }
            after = last.position
        }
        return (try CheckpointVerification(publicKey: publicKey).run(notes, on: c), passedOver)
    }
}
