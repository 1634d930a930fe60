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

    /// The report on the notes that verify under this key, and how many rows do not (a
    /// retired key's notes, altered rows, rows written outside the ledger): those prove
    /// nothing either way and are passed over, so that neither a new key nor a row anyone
    /// can insert stops rebuilds.
    package func run(on c: PostgresConnection) throws -> (report: CheckpointVerification.Report, passedOver: Int) {
        var notes: [CheckpointVerification.NoteFile] = []
        var passedOver = 0
        var after: Int64 = 0
        while true {
            let page = try CheckpointStore().list(after: after, limit: Self.pageSize, on: c)
            guard let last = page.last else { break }
            for row in page {
                if NewestNoteCheck.verified(row.note, by: publicKey) == nil { passedOver += 1; continue }
                notes.append(CheckpointVerification.NoteFile(path: "ledger.signed_checkpoints", text: row.note))
            }
            after = last.position
        }
        return (try CheckpointVerification(publicKey: publicKey).run(notes, on: c), passedOver)
    }
}
