import LedgerCore
import LedgerPostgres
import LedgerService
import LedgerTestSupport
import Testing

@Suite("verify --checkpoints shows its progress")
struct CheckpointProgressTests {
    @Test("progress counts every note checked, readable or not, a step at a time and once at the end")
    func progressCountsNotes() throws {
        let c = try TestDatabase.create("ckprogress").connect()
        defer { c.close() }
        let key = Ed25519SigningKey.generate()
        let notes = (1...5).map { position in
            Checkpoint.sign(CheckpointBody(origin: "ledger", position: Int64(position), hash: Array(repeating: 0, count: 32),
                                           signedAt: Timestamp(seconds: 1_767_225_600)), key: key).note.text
        }
        let files = [CheckpointVerification.NoteFile(path: "missing.checkpoint", text: nil),
                     CheckpointVerification.NoteFile(path: "garbage.checkpoint", text: "not a note")]
            + notes.enumerated().map { CheckpointVerification.NoteFile(path: "\($0.offset).checkpoint", text: $0.element) }
        var seen: [Int] = []
        let report = try CheckpointVerification(publicKey: key.publicKey, progressEvery: 2).run(files, on: c) { seen.append($0) }
        #expect(seen == [4, 6, 7])
        #expect(report.notes == 7)
        // The two that cannot be read, and five notes for positions the empty chain does not have.
        #expect(report.failures.count == 7)
    }
}
