import CCrypto

/// Why a key could not be used, in words an operator can act on.
public enum KeyError: Error, CustomStringConvertible, Equatable {
    case notPEM(what: String)
    case notEd25519(what: String)
    case invalidRawKey(count: Int)

    public var description: String {
        switch self {
        case .notPEM(let what): return "\(what) is not a PEM key OpenSSL can read"
        case .notEd25519(let what): return "\(what) is not an Ed25519 key"
        case .invalidRawKey(let count): return "an Ed25519 public key is 32 bytes, not \(count)"
        }
    }
}

/// An Ed25519 private key held by OpenSSL; its bytes never leave it except as PKCS#8 PEM.
/// @unchecked Sendable: the EVP_PKEY is never changed after it is made, and OpenSSL
/// allows one key to sign from several threads at once (each with its own EVP_MD_CTX).
public final class Ed25519SigningKey: @unchecked Sendable, CustomStringConvertible {
    fileprivate let pkey: OpaquePointer

    private init(pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    /// Never the key itself, so a key that reaches a log or an error message shows nothing.
    public var description: String { "Ed25519SigningKey(public: \(Hex.encode(publicKey.raw)))" }

    /// A fresh key from OpenSSL's random generator.
    public static func generate() -> Ed25519SigningKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "ED25519", nil) else {
            preconditionFailure("OpenSSL has no Ed25519 implementation (EVP_PKEY_CTX_new_from_name failed)")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_keygen(context, &key) == 1, let key else {
            preconditionFailure("OpenSSL could not generate an Ed25519 key")
        }
        return Ed25519SigningKey(pkey: key)
    }

    /// Reads a PEM private key (PKCS#8, as `keys generate` and `openssl genpkey` write it).
    public static func fromPEM(_ pem: [UInt8], what: String = "the key") throws -> Ed25519SigningKey {
        let key = try OpenSSLBIO.read(pem) { PEM_read_bio_PrivateKey($0, nil, nil, nil) }
        guard let key else { throw KeyError.notPEM(what: what) }
        guard EVP_PKEY_is_a(key, "ED25519") == 1 else {
            EVP_PKEY_free(key)
            throw KeyError.notEd25519(what: what)
        }
        return Ed25519SigningKey(pkey: key)
    }

    /// The private key as PKCS#8 PEM (unencrypted: the file's mode protects it).
    public var pkcs8PEM: [UInt8] {
        OpenSSLBIO.write { PEM_write_bio_PKCS8PrivateKey($0, pkey, nil, nil, 0, nil, nil) }
    }

    public var publicKey: Ed25519PublicKey {
        var raw = [UInt8](repeating: 0, count: 32)
        var length = 32
        let ok = raw.withUnsafeMutableBufferPointer { EVP_PKEY_get_raw_public_key(pkey, $0.baseAddress, &length) }
        precondition(ok == 1 && length == 32, "OpenSSL could not give an Ed25519 public key")
        return try! Ed25519PublicKey(raw: raw)
    }

    /// The 64-byte Ed25519 signature of `message` (pure Ed25519: the message itself, not a digest).
    public func sign(_ message: [UInt8]) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL EVP_MD_CTX_new failed: out of memory") }
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, nil, nil, pkey) == 1, "OpenSSL EVP_DigestSignInit(Ed25519) failed")
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        let ok = signature.withUnsafeMutableBufferPointer { s in
            message.withUnsafeBufferPointer { m in EVP_DigestSign(context, s.baseAddress, &length, m.baseAddress, m.count) }
        }
        precondition(ok == 1 && length == 64, "OpenSSL EVP_DigestSign(Ed25519) failed")
        return signature
    }
}

/// An Ed25519 public key: its 32 raw bytes, and OpenSSL's view of them for verifying.
public struct Ed25519PublicKey: Sendable, Equatable {
    public let raw: [UInt8]

    public init(raw: [UInt8]) throws {
        guard raw.count == 32 else { throw KeyError.invalidRawKey(count: raw.count) }
        self.raw = raw
    }

    /// Reads a SPKI PEM public key (`openssl pkey -pubout`), or the public half of a private key's PEM.
    public static func fromPEM(_ pem: [UInt8], what: String = "the public key") throws -> Ed25519PublicKey {
        var key = try OpenSSLBIO.read(pem) { PEM_read_bio_PUBKEY($0, nil, nil, nil) }
        if key == nil { key = try OpenSSLBIO.read(pem) { PEM_read_bio_PrivateKey($0, nil, nil, nil) } }
        guard let key else { throw KeyError.notPEM(what: what) }
        defer { EVP_PKEY_free(key) }
        guard EVP_PKEY_is_a(key, "ED25519") == 1 else { throw KeyError.notEd25519(what: what) }
        var raw = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard raw.withUnsafeMutableBufferPointer({ EVP_PKEY_get_raw_public_key(key, $0.baseAddress, &length) }) == 1,
              length == 32 else { throw KeyError.notEd25519(what: what) }
        return try Ed25519PublicKey(raw: raw)
    }

    /// SPKI PEM, as `openssl pkeyutl -verify -pubin` reads it.
    public var spkiPEM: [UInt8] {
        withKey { key in OpenSSLBIO.write { PEM_write_bio_PUBKEY($0, key) } } ?? []
    }

    /// True only when `signature` is `message`'s Ed25519 signature under this key.
    public func verify(signature: [UInt8], of message: [UInt8]) -> Bool {
        guard signature.count == 64 else { return false }
        return withKey { key -> Bool in
            guard let context = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
            return signature.withUnsafeBufferPointer { s in
                message.withUnsafeBufferPointer { m in EVP_DigestVerify(context, s.baseAddress, 64, m.baseAddress, m.count) == 1 }
            }
        } ?? false
    }

    private func withKey<T>(_ body: (OpaquePointer) -> T) -> T? {
        guard let key = raw.withUnsafeBufferPointer({ EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32) }) else {
            return nil
        }
        defer { EVP_PKEY_free(key) }
        return body(key)
    }
}

/// Memory BIOs for PEM in and out; OpenSSL's error queue is cleared after a failed read
/// so a later, unrelated call does not report it.
enum OpenSSLBIO {
    static func read(_ bytes: [UInt8], _ body: (OpaquePointer) -> OpaquePointer?) throws -> OpaquePointer? {
        bytes.withUnsafeBytes { buffer -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            let result = body(bio)
            if result == nil { ERR_clear_error() }
            return result
        }
    }

    static func write(_ body: (OpaquePointer) -> Int32) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { preconditionFailure("OpenSSL BIO_new failed: out of memory") }
        defer { BIO_free(bio) }
        precondition(body(bio) == 1, "OpenSSL could not write a PEM key")
        var out = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
            if n <= 0 { break }
            out.append(contentsOf: chunk[0..<Int(n)])
        }
        chunk.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
        return out
    }
}
