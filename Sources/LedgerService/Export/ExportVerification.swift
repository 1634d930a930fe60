import Foundation
import LedgerCore

/// `ledger verify-export FILE`: the file's bytes against its manifest (`FILE.manifest.json`):
/// its SHA-256, and its rows, highest position and totals counted again; and the manifest's
/// notes against the public key (shared/spec/audit.md, *Signed exports*).
package enum ExportVerification {
    /// Every difference, in words; empty when the file and both notes hold.
    package static func problems(file path: String, publicKey: Ed25519PublicKey) throws -> [String] {
        let manifestPath = path + ".manifest.json"
        guard let file = FileHandle(forReadingAtPath: path) else {
            throw ExportVerificationError.unreadable("\(path): no such file, or it cannot be read")
        }
        defer { try? file.close() }
        guard let manifestBytes = FileManager.default.contents(atPath: manifestPath) else {
            throw ExportVerificationError.unreadable("\(manifestPath): no such file, or it cannot be read")
        }
        let manifest: JSONValue
        do { manifest = try JSONValue.parse(Array(manifestBytes)) } catch {
            throw ExportVerificationError.unreadable("\(manifestPath) is not JSON: \(error)")
        }
        var problems = [String]()
        // The rows counted again, when the manifest says what kind of export the file is.
        var count = manifest["kind"]?.stringValue.flatMap(ExportKind.init(rawValue:)).flatMap { kind in
            manifest["format"]?.stringValue.flatMap(ExportFormat.init(rawValue:)).map { ExportFileCount(kind: kind, format: $0) }
        }
        let sha256 = Hex.encode(try read(file, path: path) { piece in count?.feed(piece) })
        if manifest["sha256"]?.stringValue != sha256 {
            problems.append("\(path) has SHA-256 \(sha256), its manifest says \(manifest["sha256"]?.stringValue ?? "nothing"): the file was altered")
        }
        if var count {
            count.finish()
            problems += count.differences(from: manifest)
        } else {
            problems.append("the manifest's kind and format name no export (orders or events; csv or jsonl): the rows cannot be counted")
        }
        return problems + ExportSignature.problems(manifest, publicKey: publicKey)
    }

    /// The file's SHA-256, each piece handed to `each` too, read a piece at a time: memory
    /// stays flat however large the export.
    static func read(_ file: FileHandle, path: String, each: ([UInt8]) -> Void) throws -> [UInt8] {
        let digest = Crypto.SHA256Stream()
        do {
            while let piece = try file.read(upToCount: 1 << 20), !piece.isEmpty {
                let bytes = Array(piece)
                digest.update(bytes)
                each(bytes)
            }
        } catch {
            throw ExportVerificationError.unreadable("\(path) cannot be read: \(error.localizedDescription)")
        }
        return digest.finish()
    }
}

/// Why `ledger verify-export` could not check (exit 1), or what it found.
package enum ExportVerificationError: Error, CustomStringConvertible {
    case unreadable(String)
    case differs(count: Int, first: String)

    package var description: String {
        switch self {
        case .unreadable(let what): return "cannot verify the export: \(what)"
        case .differs(let count, let first): return "the export fails \(count) check(s); the first: \(first)"
        }
    }
}
