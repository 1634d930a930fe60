/// `StateSpill`'s index: where each name's slot lies in the file, by 32 bits of the name's
/// hash. An open-addressing table of 8-byte buckets (the key in the high half, the slot in
/// the low), probed linearly, at most 85% full and grown by half: about 9.4-14 bytes a
/// name, where a `Dictionary` of the same took 16-32 (its buckets a power of two, at most
/// 75% full). Entries are never removed, only changed.
struct StateSpillIndex {
    /// A slot: its offset in the file and its size, in `unit`s, and whether it holds a state.
    struct Slot: Equatable {
        /// Offsets and sizes are whole units: a slot is `unit << sizeClass` bytes.
        static let unit = 1024
        static let largestClass = 15
        /// The offsets that fit (26 bits): a file up to 64 GB.
        static let offsets = 1 << 26

        var offsetUnits: Int
        var sizeClass: Int
        var holds: Bool

        var offset: Int64 { Int64(offsetUnits) * Int64(Self.unit) }
        var capacity: Int { Self.unit << sizeClass }

        /// The smallest class that holds `bytes`; nil when none does.
        static func sizeClass(for bytes: Int) -> Int? {
            var c = 0
            while unit << c < bytes {
                c += 1
                if c > largestClass { return nil }
            }
            return c
        }

        /// 32 bits: set (an empty bucket is 0), holds, the class in 4, the offset in 26.
        fileprivate var packed: UInt32 {
            1 << 31 | (holds ? 1 << 30 : 0) | UInt32(sizeClass) << 26 | UInt32(offsetUnits)
        }

        fileprivate init(packed: UInt32) {
            holds = packed & (1 << 30) != 0
            sizeClass = Int((packed >> 26) & 0xF)
            offsetUnits = Int(packed & (1 << 26 - 1))
        }

        init(offsetUnits: Int, sizeClass: Int, holds: Bool) {
            self.offsetUnits = offsetUnits
            self.sizeClass = sizeClass
            self.holds = holds
        }
    }

    private var buckets = [UInt64](repeating: 0, count: 1024)
    private(set) var count = 0

    subscript(key: UInt32) -> Slot? {
        get {
            let i = find(key)
            return buckets[i] == 0 ? nil : Slot(packed: UInt32(truncatingIfNeeded: buckets[i]))
        }
        set {
            guard let newValue else { preconditionFailure("entries are changed, not removed") }
            var i = find(key)
            if buckets[i] == 0 {
                if (count + 1) * 20 > buckets.count * 17 {
                    grow()
                    i = find(key)
                }
                count += 1
            }
            buckets[i] = UInt64(key) << 32 | UInt64(newValue.packed)
        }
    }

    /// Every slot, in no order.
    var slots: [Slot] {
        buckets.lazy.filter { $0 != 0 }.map { Slot(packed: UInt32(truncatingIfNeeded: $0)) }
    }

    mutating func removeAll() {
        buckets = [UInt64](repeating: 0, count: 1024)
        count = 0
    }

    /// The bucket that holds `key`, or the empty one where it would go.
    private func find(_ key: UInt32) -> Int {
        let n = buckets.count
        var i = Int((UInt64(key) &* UInt64(n)) >> 32)
        while true {
            let bucket = buckets[i]
            if bucket == 0 || UInt32(truncatingIfNeeded: bucket >> 32) == key { return i }
            i += 1
            if i == n { i = 0 }
        }
    }

    private mutating func grow() {
        let old = buckets
        buckets = [UInt64](repeating: 0, count: old.count + old.count / 2)
        for bucket in old where bucket != 0 {
            buckets[find(UInt32(truncatingIfNeeded: bucket >> 32))] = bucket
        }
    }
}
