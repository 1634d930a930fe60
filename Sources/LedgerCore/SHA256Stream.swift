import CCrypto

extension Crypto {
    /// SHA-256 over bytes that arrive in pieces (an export's file as it is written).
    /// One owner at a time: it is not safe to share between threads.
    public final class SHA256Stream: @unchecked Sendable {
        private let context: OpaquePointer
        private var finished = false

        public init() {
            guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL EVP_MD_CTX_new failed: out of memory") }
            precondition(EVP_DigestInit_ex(context, FetchedDigest.sha256.pointer, nil) == 1,
                         "OpenSSL EVP_DigestInit_ex(SHA-256) failed")
            self.context = context
        }

        deinit { EVP_MD_CTX_free(context) }

        public func update(_ bytes: [UInt8]) {
            precondition(!finished, "SHA256Stream updated after finish")
            let ok = bytes.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
            precondition(ok == 1, "OpenSSL EVP_DigestUpdate(SHA-256) failed")
        }

        /// The digest of everything given; the stream takes nothing after it.
        public func finish() -> [UInt8] {
            precondition(!finished, "SHA256Stream finished twice")
            finished = true
            var out = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 32
            let ok = out.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
            precondition(ok == 1 && length == 32, "OpenSSL EVP_DigestFinal_ex(SHA-256) failed")
            return out
        }
    }
}
