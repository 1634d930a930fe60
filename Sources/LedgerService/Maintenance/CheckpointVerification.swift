import Foundation
import LedgerCore
import LedgerPostgres

/// `ledger verify --checkpoints`: every note's signature verifies under the key, and the
/// chain's hash at its position equals the note's (shared/spec/audit.md, *Verifying*,
/// item 4). Run after the chain walk has found every stored hash equal to its
/// recomputation, so the stored hash at a position is the chain's; this is what catches
/// a rewrite that recomputed the chain, which the walk alone cannot.
package struct CheckpointVerification: Sendable {
    package let publicKey: Ed25519PublicKey
    /// Notes checked between two calls of `run`'s `progress`.
    package let progressEvery: Int

    package init(publicKey: Ed25519PublicKey, progressEvery: Int = 1_000) {
        self.publicKey = publicKey
        self.progressEvery = max(1, progressEvery)
    }

    /// A note read from a file, or the reason it could not be read as one.
    package struct NoteFile: Sendable {
        package let path: String
        package let text: String?

        package init(path: String, text: String?) {
            self.path = path
            self.text = text
        }
    }

    package struct Report: Sendable {
        package var notes: Int
        /// Each failing note, in words: its file, its position and what is wrong.
        package var failures: [String]
    }

    /// Every `.checkpoint` file among `paths` (files as given, folders searched one level), sorted by name.
    package static func files(_ paths: [String]) throws -> [NoteFile] {
        var out = [NoteFile]()
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CheckpointVerificationError.unreadable("\(path): no such file or folder")
            }
            let names = isDirectory.boolValue
                ? try FileManager.default.contentsOfDirectory(atPath: path).filter(CheckpointDirectory.isNoteName)
                    .sorted().map { (path as NSString).appendingPathComponent($0) }
                : [path]
            // A folder with no note in it checks nothing: most likely the wrong folder.
            if names.isEmpty { throw CheckpointVerificationError.unreadable("\(path): no .checkpoint files in this folder") }
            for name in names {
                out.append(NoteFile(path: name, text: FileManager.default.contents(atPath: name).map { String(decoding: $0, as: UTF8.self) }))
            }
        }
        return out
    }

    /// Checks every note of `files`; `progress` is told how many have been checked, every
    /// `progressEvery` and once at the end.
    package func run(_ files: [NoteFile], on connection: PostgresConnection,
                     progress: (Int) -> Void = { _ in }) throws -> Report {
        var failures = [String]()
        var parsed = [(file: NoteFile, checkpoint: Checkpoint)]()
        for file in files {
            guard let text = file.text else { failures.append("\(file.path): cannot be read"); continue }
            guard let checkpoint = Checkpoint(text: text) else {
                failures.append("\(file.path): not a checkpoint note (four body lines, an empty line, one signature line)")
                continue
            }
            parsed.append((file, checkpoint))
        }
        var hashes = [Int64: [UInt8]]()
        // One lookup per thousand notes, so ten thousand notes cost ten index scans.
        let positions = Array(Set(parsed.map(\.checkpoint.body.position))).sorted()
        for start in stride(from: 0, to: positions.count, by: 1000) {
            let chunk = Array(positions[start..<min(positions.count, start + 1000)])
            hashes.merge(try CheckpointStore().chainHashes(at: chunk, on: connection)) { a, _ in a }
        }
        // The unreadable files were checked above, before any note.
        var checked = files.count - parsed.count
        for (file, checkpoint) in parsed {
            checked += 1
            if checked % progressEvery == 0 { progress(checked) }
            let position = checkpoint.body.position
            let name = "the note at position \(position) (\(file.path))"
            if !checkpoint.note.verifies(publicKey: publicKey) {
                failures.append("\(name): its signature does not verify under the public key")
            } else if !checkpoint.note.verifies(name: checkpoint.body.origin, publicKey: publicKey) {
                let signers = checkpoint.note.signatures.map(\.name).joined(separator: ", ")
                failures.append("\(name): it is signed as \(signers), not as its origin \(checkpoint.body.origin)")
            } else if let hash = hashes[position] {
                if hash != checkpoint.body.hash {
                    failures.append("\(name): the chain's hash there is \(Hex.encode(hash)), the note says \(Hex.encode(checkpoint.body.hash)): the history before it was rewritten")
                }
            } else {
                failures.append("\(name): the chain has no event at that position")
            }
        }
        progress(files.count)
        return Report(notes: files.count, failures: failures)
    }
}

/// Why `ledger verify --checkpoints` failed (exit 1).
package enum CheckpointVerificationError: Error, CustomStringConvertible {
    case unreadable(String)
    case notesFail(count: Int, first: String)

    package var description: String {
        switch self {
        case .unreadable(let what): return "cannot read the checkpoints: \(what)"
        case .notesFail(let count, let first): return "\(count) checkpoint note(s) fail; the first: \(first)"
        }
    }
}
