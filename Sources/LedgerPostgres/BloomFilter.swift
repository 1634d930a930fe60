/// A set that may answer "maybe" for a string it never held, but never "no" for
/// one it did: `bits` bits, `hashes` positions a member (double hashing of one
/// 64-bit hash). The hash is Swift's `Hasher`, seeded per process: a filter lives
/// in memory only.
struct BloomFilter: Sendable {
    private var words: [UInt64]
    private let mask: UInt64
    private let hashes: Int
    /// Members added (duplicates counted): how full the filter is.
    private(set) var insertions = 0

    /// - Parameter bits: rounded up to a power of two, at least 64.
    init(bits: Int, hashes: Int = 6) {
        var size = 64
        while size < bits { size <<= 1 }
        words = [UInt64](repeating: 0, count: size / 64)
        mask = UInt64(size - 1)
        self.hashes = max(1, hashes)
    }

    func mayContain(_ member: String) -> Bool {
        var (position, step) = Self.start(member)
        for _ in 0..<hashes {
            let bit = position & mask
            if words[Int(bit >> 6)] & (1 << (bit & 63)) == 0 { return false }
            position &+= step
        }
        return true
    }

    mutating func insert(_ member: String) {
        var (position, step) = Self.start(member)
        for _ in 0..<hashes {
            let bit = position & mask
            words[Int(bit >> 6)] |= 1 << (bit & 63)
            position &+= step
        }
        insertions += 1
    }

    /// Adds every member of `other`, a filter of the same size and hash count (in the
    /// same process: the hash is seeded per process). Counts its insertions as this one's.
    mutating func formUnion(_ other: BloomFilter) {
        precondition(other.words.count == words.count && other.hashes == hashes, "Bloom filters of different shapes")
        for index in words.indices { words[index] |= other.words[index] }
        insertions += other.insertions
    }

    /// The first bit position and the odd step between positions.
    private static func start(_ member: String) -> (UInt64, UInt64) {
        var hasher = Hasher()
        hasher.combine(member)
        let h = UInt64(bitPattern: Int64(hasher.finalize()))
        return (h, (h >> 32 | h << 32) | 1)
    }
}
