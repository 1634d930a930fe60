import CCrypto

/// An HMAC-SHA256 key made ready once for many messages (RFC 2104): the SHA-256 states
/// after the key's inner and outer pad blocks are kept, so a message costs its own bytes
/// and the outer block only, not the key's two blocks, four buffers and a context each
/// time. For checking many stored signatures with the same few keys (`ledger verify`).
/// Gives exactly `Crypto.hmacSHA256` (HMACTests). The key's bytes are not kept; the pad
/// states are wiped by OpenSSL when the key is released.
public final class HMACKey: @unchecked Sendable {
    // @unchecked: both states are written once, in init, and only read (copied) after;
    // OpenSSL allows a context to be the source of copies on several threads at once.
    private let inner: OpaquePointer
    private let outer: OpaquePointer

    public init(_ key: [UInt8]) {
        let blockSize = 64
        var block = key.count > blockSize ? Crypto.sha256(key) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        inner = Self.absorbing(block, mask: 0x36)
        outer = Self.absorbing(block, mask: 0x5c)
        block.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
    }

    deinit {
        EVP_MD_CTX_free(inner)
        EVP_MD_CTX_free(outer)
    }

    /// HMAC-SHA256 of `prefix` followed by `message` (no copy of either into one buffer).
    public func mac(_ prefix: [UInt8], _ message: [UInt8]) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL EVP_MD_CTX_new failed: out of memory") }
        defer { EVP_MD_CTX_free(context) }
        var digest = [UInt8](repeating: 0, count: 32)
        precondition(EVP_MD_CTX_copy_ex(context, inner) == 1, "OpenSSL EVP_MD_CTX_copy_ex failed")
        Self.update(context, prefix)
        Self.update(context, message)
        Self.finish(context, into: &digest)
        precondition(EVP_MD_CTX_copy_ex(context, outer) == 1, "OpenSSL EVP_MD_CTX_copy_ex failed")
        Self.update(context, digest)
        Self.finish(context, into: &digest)
        return digest
    }

    private static func absorbing(_ block: [UInt8], mask: UInt8) -> OpaquePointer {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL EVP_MD_CTX_new failed: out of memory") }
        precondition(EVP_DigestInit_ex(context, FetchedDigest.sha256.pointer, nil) == 1, "OpenSSL EVP_DigestInit_ex(SHA-256) failed")
        var pad = block.map { $0 ^ mask }
        update(context, pad)
        pad.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
        return context
    }

    private static func update(_ context: OpaquePointer, _ bytes: [UInt8]) {
        let ok = bytes.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
        precondition(ok == 1, "OpenSSL EVP_DigestUpdate(SHA-256) failed")
    }

    private static func finish(_ context: OpaquePointer, into out: inout [UInt8]) {
        var length: UInt32 = 32
        let ok = out.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        precondition(ok == 1 && length == 32, "OpenSSL EVP_DigestFinal_ex(SHA-256) failed")
    }
}
