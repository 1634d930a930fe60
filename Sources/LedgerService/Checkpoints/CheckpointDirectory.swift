import Foundation
import LedgerCore

/// `LEDGER_CHECKPOINT_DIR`: every note is also written there as `<position>.checkpoint`,
/// under a temporary name renamed only once the file is whole, so a reader never sees half a note.
public struct CheckpointDirectory: Sendable {
    public let path: String

    /// Refuses a folder that is missing or that this user cannot write, before anything is signed.
    public init(path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ConfigurationError.invalid("LEDGER_CHECKPOINT_DIR", value: path, hint: "no such folder")
        }
        // A file made and removed, not access(2): root passes access() on folders it still
        // cannot write (a read-only mount, sysfs).
        let probe = (path as NSString).appendingPathComponent(".ledger-write-probe.\(getpid())")
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw ConfigurationError.invalid("LEDGER_CHECKPOINT_DIR", value: path,
                                             hint: "this user cannot write the folder (\(String(cString: strerror(errno))))")
        }
        close(fd)
        unlink(probe)
        self.path = path
    }

    public static func fileName(position: Int64) -> String { "\(position).checkpoint" }

    /// Whether a file in the folder is a note (`<anything>.checkpoint`, not hidden: the
    /// temporary files a write renames are).
    public static func isNoteName(_ name: String) -> Bool { name.hasSuffix(".checkpoint") && !name.hasPrefix(".") }

    /// The notes' file names in `path` (none when it cannot be read).
    public static func noteNames(in path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter(isNoteName)
    }

    /// The positions of the notes written here, highest first (from the file names alone).
    public func positions() -> [Int64] {
        return Self.noteNames(in: path).compactMap { name -> Int64? in
            guard let position = Int64(name.dropLast(".checkpoint".count)), position > 0 else { return nil }
            return position
        }.sorted(by: >)
    }

    /// The note written for `position`, nil when there is none or it cannot be read.
    public func note(at position: Int64) -> String? {
        FileManager.default.contents(atPath: (path as NSString).appendingPathComponent(Self.fileName(position: position)))
            .map { String(decoding: $0, as: UTF8.self) }
    }

    /// Writes the note unless the folder holds another note for that position (another
    /// key's, kept): what a note that could not be stored in the table does.
    public func writeUnlessTaken(_ note: String, position: Int64) throws {
        if let existing = self.note(at: position), existing != note { return }
        try write(note, position: position)
    }

    public func write(_ note: String, position: Int64) throws {
        let final = (path as NSString).appendingPathComponent(Self.fileName(position: position))
        // A name nobody can guess, created anew (never through a link someone planted in a
        // folder others may write to, such as an auditor's mailbox).
        let nonce = String(UInt64.random(in: .min ... .max), radix: 16)
        let temporary = (path as NSString).appendingPathComponent(".\(Self.fileName(position: position)).\(getpid()).\(nonce).tmp")
        let bytes = Array(note.utf8)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CheckpointError.cannotWrite(temporary, String(cString: strerror(errno))) }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(temporary, final) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CheckpointError.cannotWrite(final, reason)
        }
    }
}
