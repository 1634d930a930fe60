import Foundation
import LedgerCore
import LedgerPostgres

/// The checkpoint notes the service signed, in `ledger.signed_checkpoints` and in
/// `LEDGER_CHECKPOINT_DIR` when it is set, checked against the chain as it is now under the
/// public half of the checkpoint key: what `ledger rebuild` does before it folds, so that a
/// log whose chain was recomputed after a note was signed is refused, as the walk of the
/// chain alone cannot. A note row deleted or altered with the triggers off escapes the
/// table's part; the folder, which someone with the database's keys cannot reach, does not,
/// nor do copies kept elsewhere (`ledger verify --checkpoints`).
package struct StoredNotesCheck {
    package let publicKey: Ed25519PublicKey
    /// `LEDGER_CHECKPOINT_DIR`, read only.
    package let directory: String?
    static let pageSize = 1_000

    package init(publicKey: Ed25519PublicKey, directory: String? = nil) {
        self.publicKey = publicKey
        self.directory = directory
    }

    /// The report on the notes that verify under this key, and how many rows and files do
    /// not (a retired key's notes, altered rows, rows written outside the ledger): those
    /// prove nothing either way and are passed over, so that neither a new key nor a row
    /// anyone can insert stops rebuilds.
    package func run(on c: PostgresConnection) throws -> (report: CheckpointVerification.Report, passedOver: Int) {
        var notes: [CheckpointVerification.NoteFile] = []
        var passedOver = 0
        var taken = Set<String>()   // a note in the table and in the folder is checked once
        func take(_ text: String, from path: String) {
            if NewestNoteCheck.verified(text, by: publicKey) == nil { passedOver += 1; return }
            if taken.insert(text).inserted { notes.append(CheckpointVerification.NoteFile(path: path, text: text)) }
        }
        var after: Int64 = 0
        while true {
            let page = try CheckpointStore().list(after: after, limit: Self.pageSize, on: c)
            guard let last = page.last else { break }
            for row in page { take(row.note, from: "ledger.signed_checkpoints") }
            after = last.position
        }
        // The folder's notes (none yet is no error here: the service may not have signed one).
        // A folder that cannot be read is: passing it over would leave the table's rows, which
        // the database's keys can alter, as the only notes checked.
        if let directory {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: directory).filter(CheckpointDirectory.isNoteName)
            } catch {
                throw CheckpointVerificationError.unreadable("LEDGER_CHECKPOINT_DIR \(directory) cannot be read (\(error.localizedDescription)): "
                    + "its notes are what a rewrite of the table's cannot reach; run as a user who can read it, or unset it")
            }
            for name in names.sorted() {
                let path = (directory as NSString).appendingPathComponent(name)
                guard let text = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else {
                    throw CheckpointVerificationError.unreadable("\(path) cannot be read: run as a user who can read LEDGER_CHECKPOINT_DIR")
                }
                take(text, from: path)
            }
        }
        return (try CheckpointVerification(publicKey: publicKey).run(notes, on: c), passedOver)
    }
}
