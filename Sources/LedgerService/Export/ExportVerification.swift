import Foundation
import LedgerCore

/// `ledger verify-export FILE`: the file's bytes against its manifest (`FILE.manifest.json`),
/// and the manifest's notes against the public key (shared/spec/audit.md, *Signed exports*).
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
        let sha256 = Hex.encode(try digest(of: file, path: path))
        if manifest["sha256"]?.stringValue != sha256 {
            problems.append("\(path) has SHA-256 \(sha256), its manifest says \(manifest["sha256"]?.stringValue ?? "nothing"): the file was altered")
        }
        return problems + ExportSignature.problems(manifest, publicKey: publicKey)
    }

    /// The file's SHA-256, read a piece at a time: memory stays flat however large the export.
    static func digest(of file: FileHandle, path: String) throws -> [UInt8] {
        let digest = Crypto.SHA256Stream()
        do {
            while let piece = try file.read(upToCount: 1 << 20), !piece.isEmpty { digest.update(Array(piece)) }
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
