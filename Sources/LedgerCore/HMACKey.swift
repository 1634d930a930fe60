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
        var block = Crypto.hmacKeyBlock(key)
        defer { Crypto.wipe(&block) }
        inner = Self.started(block, mask: 0x36)
        outer = Self.started(block, mask: 0x5c)
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
        Crypto.digestUpdate(context, prefix)
        Crypto.digestUpdate(context, message)
        Crypto.digestFinal(context, into: &digest)
        precondition(EVP_MD_CTX_copy_ex(context, outer) == 1, "OpenSSL EVP_MD_CTX_copy_ex failed")
        Crypto.digestUpdate(context, digest)
        Crypto.digestFinal(context, into: &digest)
        return digest
    }

    private static func started(_ block: [UInt8], mask: UInt8) -> OpaquePointer {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL EVP_MD_CTX_new failed: out of memory") }
        Crypto.startPad(context, block, mask: mask)
        return context
    }
}
