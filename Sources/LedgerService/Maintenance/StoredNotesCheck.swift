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

    package func run(on c: PostgresConnection) throws -> CheckpointVerification.Report {
        var notes: [CheckpointVerification.NoteFile] = []
        var after: Int64 = 0
        while true {
            let page = try CheckpointStore().list(after: after, limit: Self.pageSize, on: c)
            guard let last = page.last else { break }
            notes += page.map { CheckpointVerification.NoteFile(path: "ledger.signed_checkpoints", text: $0.note) }
            after = last.position
        }
        return try CheckpointVerification(publicKey: publicKey).run(notes, on: c)
    }
}
