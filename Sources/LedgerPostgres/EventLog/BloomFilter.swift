/// A set that may answer "maybe" for a string it never held, but never "no" for
/// one it did: `bits` bits, `hashes` bits a member.
///
/// Blocked: a member's bits all lie in one 512-bit block (one cache line), so an
/// insert or a lookup touches one line of a filter of megabytes, not `hashes`
/// lines. At the fill the writer runs at (a few bits a member in use of 8 or more),
/// that costs little in false "maybe"s against a classic filter.
///
/// Members are looked up by their `Fingerprint` (Swift's `Hasher`, seeded per
/// process: a filter lives in memory only). A submitting thread takes the
/// fingerprint, so the single writer only sets and tests bits.
struct BloomFilter: Sendable {
    /// A member's 64-bit hash: which block, and which bits in it.
    struct Fingerprint: Sendable, Hashable {
        let value: UInt64

        init(_ member: String) {
            var hasher = Hasher()
            hasher.combine(member)
            value = UInt64(bitPattern: Int64(hasher.finalize()))
        }
    }

    private var words: [UInt64]
    /// Blocks minus one (their count is a power of two).
    private let blockMask: UInt64
    private let hashes: Int
    /// Members added (duplicates counted): how full the filter is.
    private(set) var insertions = 0

    static let wordsPerBlock = 8

    /// - Parameter bits: rounded up to a power of two, at least one block (512).
    /// - Parameter hashes: bits a member, at most 7 (each takes 9 bits of the fingerprint's mix).
    init(bits: Int, hashes: Int = 6) {
        var size = 64 * Self.wordsPerBlock
        while size < bits { size <<= 1 }
        words = [UInt64](repeating: 0, count: size / 64)
        blockMask = UInt64(size / (64 * Self.wordsPerBlock) - 1)
        self.hashes = min(7, max(1, hashes))
    }

    func mayContain(_ member: String) -> Bool { mayContain(Fingerprint(member)) }

    mutating func insert(_ member: String) { insert(Fingerprint(member)) }

    func mayContain(_ fingerprint: Fingerprint) -> Bool {
        var (block, bits) = locate(fingerprint)
        for _ in 0..<hashes {
            let bit = Int(bits & 511)
            if words[block + bit >> 6] & (1 << UInt64(bit & 63)) == 0 { return false }
            bits >>= 9
        }
        return true
    }

    mutating func insert(_ fingerprint: Fingerprint) {
        var (block, bits) = locate(fingerprint)
        for _ in 0..<hashes {
            let bit = Int(bits & 511)
            words[block + bit >> 6] |= 1 << UInt64(bit & 63)
            bits >>= 9
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

    /// The block's first word (from the fingerprint's high bits), and the bits inside it
    /// (nine at a time, from a mix of the whole fingerprint: splitmix64's finalizer).
    private func locate(_ fingerprint: Fingerprint) -> (Int, UInt64) {
        let h = fingerprint.value
        let block = Int((h >> 32 ^ h << 32) & blockMask) * Self.wordsPerBlock
        var mixed = h ^ (h >> 30)
        mixed = mixed &* 0xbf58_476d_1ce4_e5b9
        mixed ^= mixed >> 27
        mixed = mixed &* 0x94d0_49bb_1331_11eb
        mixed ^= mixed >> 31
        return (block, mixed)
    }
}
