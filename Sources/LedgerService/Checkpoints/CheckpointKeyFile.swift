import Foundation
import LedgerCore

/// The signing key's files: `ledger keys generate` writes them, every signer reads the
/// private one. A key that others may read, that is not there, or that is not Ed25519
/// is refused with the variable and the reason, before anything is signed.
public enum CheckpointKeyFile {
    public static let privateName = "checkpoint.key"
    public static let publicName = "checkpoint.pub"
    /// The largest key file read (a PEM key is a few hundred bytes).
    static let largestFile = 64 * 1024

    /// Reads the private key at `path` (`LEDGER_CHECKPOINT_KEY`).
    public static func load(path: String, variable: String = "LEDGER_CHECKPOINT_KEY") throws -> Ed25519SigningKey {
        func refuse(_ hint: String) -> ConfigurationError { .invalid(variable, value: path, hint: hint) }
        var info = stat()
        guard stat(path, &info) == 0 else { throw refuse("no such file (`ledger keys generate --out DIR` makes one)") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw refuse("not a regular file") }
        guard info.st_size <= Self.largestFile else { throw refuse("larger than \(Self.largestFile) bytes, which no key file is") }
        // A signing key others can read is a key others can sign with.
        guard info.st_mode & 0o077 == 0 else {
            throw refuse("the key can be read by others (mode \(String(info.st_mode & 0o777, radix: 8))): chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw refuse("the file cannot be read by this user") }
        do {
            return try Ed25519SigningKey.fromPEM(Array(data), what: "the file")
        } catch let error as KeyError {
            throw refuse(error.description + " (an Ed25519 PKCS#8 PEM private key, as `ledger keys generate` writes)")
        }
    }

    /// The public key in `path`: SPKI PEM, or the public half of a private key's PEM.
    public static func loadPublic(path: String) throws -> Ed25519PublicKey {
        // A regular file of a key's size: `/dev/zero` or a fifo would be read for ever.
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= Self.largestFile,
              let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError.invalid("--public-key", value: path,
                                             hint: "no such file, not a regular file of at most \(Self.largestFile) bytes, or it cannot be read")
        }
        do {
            return try Ed25519PublicKey.fromPEM(Array(data), what: "the file")
        } catch let error as KeyError {
            throw ConfigurationError.invalid("--public-key", value: path, hint: error.description + " (an Ed25519 SPKI PEM public key)")
        }
    }

    /// Writes a new key pair into `directory` (made if missing), the private key with mode
    /// 0600 from its creation on; refuses when either name is already taken (a dangling
    /// link included). Both files or neither: when the second cannot be written, the first
    /// is removed again.
    public static func generate(into directory: String) throws -> Ed25519SigningKey {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let privatePath = (directory as NSString).appendingPathComponent(privateName)
        let publicPath = (directory as NSString).appendingPathComponent(publicName)
        var status = stat()
        for path in [privatePath, publicPath] where lstat(path, &status) == 0 {
            throw KeyFileError.exists(path)
        }
        let key = Ed25519SigningKey.generate()
        try create(privatePath, mode: 0o600, key.pkcs8PEM)
        do {
            try create(publicPath, mode: 0o644, key.publicKey.spkiPEM)
        } catch {
            unlink(privatePath)
            throw error
        }
        // The names themselves survive a crash from here on.
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
        return key
    }

    /// O_EXCL: a file that appeared since the check above is never overwritten.
    private static func create(_ path: String, mode: mode_t, _ bytes: [UInt8]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw KeyFileError.cannotWrite(path, String(cString: strerror(errno))) }
        defer { close(fd) }
        guard fchmod(fd, mode) == 0 else { throw KeyFileError.cannotWrite(path, String(cString: strerror(errno))) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else { throw KeyFileError.cannotWrite(path, String(cString: strerror(errno))) }
    }
}

/// Why `ledger keys generate` wrote nothing.
public enum KeyFileError: Error, CustomStringConvertible {
    case exists(String)
    case cannotWrite(String, String)

    public var description: String {
        switch self {
        case .exists(let path): return "\(path) already exists: a key is never overwritten (choose another --out folder)"
        case .cannotWrite(let path, let reason): return "cannot write \(path): \(reason)"
        }
    }
}
