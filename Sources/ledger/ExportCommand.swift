import Foundation
import LedgerCore
import LedgerPostgres
import LedgerService

/// `ledger export orders|events --from T --to T [--format csv|jsonl] [--out FILE]`
/// (exports.md): the rows, and beside FILE its manifest `FILE.manifest.json`.
struct ExportCommand {
    let cli: LedgerCLI

    func run(_ words: [String]) throws -> Int32 {
        let args = try Arguments(words, valued: ["from", "to", "format", "out"])
        if args.has("help") {
            cli.output("""
                usage: ledger export orders|events --from TIME --to TIME [--format csv|jsonl] [--out FILE]
                  orders: one row per order whose first paid observation was recorded in [from, to), as it stood at `to`.
                  events: one row per event recorded in [from, to), in ledger order.
                  TIME is a date (00:00 UTC) or an RFC 3339 time; the period is half-open, on the ledger's recording
                  time, so exporting a closed period again gives the same bytes. --format defaults to csv.
                  With --out, FILE and FILE.manifest.json are written whole or not at all; without it the rows go
                  to stdout and the manifest to stderr. With LEDGER_CHECKPOINT_KEY the manifest also carries
                  `checkpoint` and `signature` notes (`ledger verify-export FILE` checks them).
                """)
            return 0
        }
        try args.allowOnly(flags: ["help"])
        guard args.positional.count == 1, let kind = ExportKind(rawValue: args.positional[0]) else {
            throw CLIError.usage("name what to export: orders or events")
        }
        let from = try Self.time(args, "from"), to = try Self.time(args, "to")
        guard from.microseconds < to.microseconds else {
            throw CLIError.usage("--from \(from.rfc3339) must come before --to \(to.rfc3339)")
        }
        let formatText = args.value("format") ?? "csv"
        guard let format = ExportFormat(rawValue: formatText) else { throw CLIError.usage("--format must be csv or jsonl, not \(formatText)") }
        if let out = args.value("out") { try Self.checkOut(out) }
        let configuration = try cli.configuration()
        // With a key, the manifest carries a checkpoint and its own signature (audit.md, *Signed exports*).
        let signer = try CheckpointSigner.configured(configuration.service.checkpoints)
        let session = ExportSession(kind: kind, from: from, to: to, format: format, connection: try cli.connect(configuration),
                                    newestNote: signer?.newestNote)
        let showProgress = isatty(STDERR_FILENO) == 1
        let line = ProgressLine()
        let progress: (Int64) -> Void = { rows in
            if showProgress { line.show("\rledger export: \(rows) rows") }
        }
        // A failure's message goes on a line of its own, not after the progress line's count.
        do {
            return try export(args: args, session: session, signer: signer, line: line, progress: progress)
        } catch {
            line.end()
            throw error
        }
    }

    private func export(args: Arguments, session: ExportSession, signer: CheckpointSigner?, line: ProgressLine,
                        progress: @escaping (Int64) -> Void) throws -> Int32 {
        guard let out = args.value("out") else {
            var manifest = try session.run(write: { FileHandle.standardOutput.write(Data($0)) }, progress: progress)
            if let signer { manifest = signer.signed(manifest) }
            line.end()
            FileHandle.standardError.write(Data((JSONSerializer.string(manifest) + "\n").utf8))
            return 0
        }
        try ExportFiles(path: out).write { file in
            let manifest = try session.run(write: file, progress: progress)
            line.end()
            return signer.map { $0.signed(manifest) } ?? manifest
        }
        cli.output("wrote \(out) and \(out).manifest.json")
        return 0
    }

    /// `--out` names a file: not nothing, and not a folder (checked before the export runs,
    /// not found out at the rename that ends it).
    static func checkOut(_ out: String) throws {
        var isDirectory: ObjCBool = false
        if out.isEmpty || out.hasSuffix("/") || (FileManager.default.fileExists(atPath: out, isDirectory: &isDirectory) && isDirectory.boolValue) {
            throw CLIError.usage("--out names the file to write, \(out.isEmpty ? "not nothing" : "not the folder \(out)")")
        }
    }

    private static func time(_ args: Arguments, _ name: String) throws -> Timestamp {
        let text = try args.required(name)
        guard let t = TimeBound.parse(text) else { throw CLIError.usage("--\(name) \(text) is not \(TimeBound.forms)") }
        return t
    }
}

/// An export's file and manifest, written under temporary names and renamed into place
/// only when both are complete: a failed export leaves nothing half-written.
struct ExportFiles {
    let path: String

    func write(_ body: (_ file: ([UInt8]) throws -> Void) throws -> JSONValue) throws {
        let manifestPath = path + ".manifest.json"
        let partial = path + ".partial", manifestPartial = manifestPath + ".partial"
        // Ctrl-C (or SIGTERM, SIGHUP) from here on removes the temporary files before the
        // process ends; armed before the export's threads start, so none of them takes it.
        let onSignal = PartialFilesOnSignal.arm([partial, manifestPartial])
        defer { onSignal.finished() }
        guard FileManager.default.createFile(atPath: partial, contents: nil) else {
            throw CLIError.failed("cannot create \(partial): check the directory exists and is writable", exitCode: 1)
        }
        do {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: partial))
            let manifest: JSONValue
            do {
                manifest = try body { try handle.write(contentsOf: $0) }   // the bytes as they are, not copied into Data
                try handle.synchronize()
                try handle.close()
            } catch {
                try? handle.close()
                throw error
            }
            try Self.writeSynced(Array((JSONSerializer.string(manifest) + "\n").utf8), to: manifestPartial)
            onSignal.finishing()
            // An older manifest goes first: a stop between the renames leaves the new file
            // without a manifest (plainly unfinished), never beside an old one.
            if unlink(manifestPath) != 0 && errno != ENOENT {
                throw CLIError.failed("cannot replace \(manifestPath): errno \(errno)", exitCode: 1)
            }
            try Self.replace(path, with: partial)
            try Self.replace(manifestPath, with: manifestPartial)
            Self.syncDirectory(of: path)
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            try? FileManager.default.removeItem(atPath: manifestPartial)
            throw error
        }
    }

    /// `bytes` written to a new file at `path` and on disk before this returns.
    private static func writeSynced(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CLIError.failed("cannot create \(path): \(String(cString: strerror(errno)))", exitCode: 1) }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            throw CLIError.failed("cannot write \(path): \(String(cString: strerror(errno)))", exitCode: 1)
        }
    }

    /// The renames themselves on disk: the folder holding `path` synced.
    private static func syncDirectory(of path: String) {
        let fd = open((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent,
                      O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
    }

    private static func replace(_ path: String, with partial: String) throws {
        guard rename(partial, path) == 0 else {
            throw CLIError.failed("cannot move \(partial) to \(path): errno \(errno)", exitCode: 1)
        }
    }
}

/// The progress line on a terminal: written over itself with `\r`, and ended with a line
/// break when something else is to be printed after it.
final class ProgressLine: @unchecked Sendable {
    // @unchecked: `open` is guarded by `lock`.
    private let lock = NSLock()
    private var open = false

    func show(_ text: String) {
        lock.withLock { open = true }
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Ends the line if one was shown and not ended.
    func end() {
        let wasOpen = lock.withLock { () -> Bool in defer { open = false }; return open }
        if wasOpen { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
