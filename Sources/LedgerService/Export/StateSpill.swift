import Foundation
import Glibc
import LedgerCore

/// Order states an events export set aside once its memory for them was full, kept in an
/// unlinked temporary file (gone when the export ends, however it ends), one slot per
/// order, reused while the state fits. A state read back, or kept in memory again, leaves
/// the file (its slot stays for the order's next one): the tracker's copy is the current
/// one from then on, and one dropped later without being set aside again must not come
/// back older than it was.
/// `StatusTracker` reads a state back from here
/// instead of folding the order's earlier events again from the log, which is most of an
/// export's time on a ledger whose orders' events lie far apart. Memory: an index entry
/// per order set aside, not its state. Should the file fail (no space, say), it is given
/// up and the export falls back to the log.
final class StateSpill {
    private var fd: Int32 = -1
    private var failed = false
    private var end: Int64 = 0
    /// By 32 bits of the stream's hash in this process: its slot, packed (`Slot`). Each slot
    /// holds the stream's name too, so a hash shared by two streams only costs one of them
    /// a replay. One entry per order ever set aside, 12 bytes a bucket: an export of
    /// 500,000 interleaved orders holds about 12 MB here.
    private var slots: [UInt32: UInt64] = [:]
    private var buffer: [UInt8] = []
    /// States written, and read back.
    private(set) var written = 0
    private(set) var read = 0

    init() {}

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// Sets `state` aside for `stream`, with the stream version folded last (nil when the
    /// events folded are not the stream's own).
    func put(_ stream: String, _ state: OrderState, version: Int?) {
        guard !failed, open() else { return }
        let bytes = state.storageBytes()
        buffer.removeAll(keepingCapacity: true)
        for field in [Int64(stream.utf8.count), Int64(version ?? -1), Int64(bytes.count)] {
            withUnsafeBytes(of: field) { buffer.append(contentsOf: $0) }
        }
        buffer += stream.utf8
        buffer += bytes
        let key = Self.key(stream)
        var slot = slots[key].map(Slot.init) ?? Slot(offset: end, capacity: 0, holds: false)
        if slot.capacity < buffer.count {
            let capacity = (buffer.count * 5 / 4 + Slot.unit - 1) / Slot.unit * Slot.unit
            guard capacity <= Slot.largest else { slots[key] = nil; return }
            slot = Slot(offset: end, capacity: capacity, holds: false)
            end += Int64(capacity)
        }
        let wrote = buffer.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(slot.offset)) }
        guard wrote == buffer.count else { return giveUp() }
        slot.holds = true
        slots[key] = slot.packed
        written += 1
    }

    /// The state set aside for `stream` and the version folded into it, taken out of the
    /// file; nil when there is none.
    func load(_ stream: String) -> (state: OrderState, version: Int?)? {
        let key = Self.key(stream)
        guard !failed, let slot = slots[key].map(Slot.init), slot.holds else { return nil }
        // The scratch buffer `put` also uses: one slot's bytes at a time, on one thread.
        if buffer.count < slot.capacity { buffer = [UInt8](repeating: 0, count: slot.capacity) }
        let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, slot.capacity, off_t(slot.offset)) }
        guard got >= Self.header else { giveUp(); return nil }
        let bytes = buffer
        let (nameCount, version, stateCount) = bytes.withUnsafeBytes {
            (Int($0.loadUnaligned(as: Int64.self)), $0.loadUnaligned(fromByteOffset: 8, as: Int64.self),
             Int($0.loadUnaligned(fromByteOffset: 16, as: Int64.self)))
        }
        let h = Self.header
        guard nameCount >= 0, stateCount >= 0, h + nameCount + stateCount <= got,
              bytes[h..<(h + nameCount)].elementsEqual(stream.utf8) else { return nil }
        let stored = bytes[(h + nameCount)..<(h + nameCount + stateCount)]
        slots[key] = Slot(offset: slot.offset, capacity: slot.capacity, holds: false).packed
        guard let state = try? stored.withUnsafeBufferPointer({ try OrderState(storage: JSONValue.parse(stored: $0)) }) else { return nil }
        read += 1
        return (state, version < 0 ? nil : Int(version))
    }

    /// `stream`'s state is kept elsewhere from now on: any copy here is out of date.
    func forget(_ stream: String) {
        guard !slots.isEmpty else { return }
        let key = Self.key(stream)
        if let packed = slots[key], packed & 1 == 1 { slots[key] = packed & ~1 }
    }

    private static func key(_ stream: String) -> UInt32 { UInt32(truncatingIfNeeded: stream.hashValue) }

    /// A slot's place in the file, in whole units: its offset in the top 40 bits, its size
    /// in the next 23, and whether it holds a state in the lowest.
    private struct Slot {
        static let unit = 256
        /// The largest slot; a state larger than this is not set aside (its order is read
        /// again from the log when it comes back).
        static let largest = ((1 << 23) - 1) * unit
        var offset: Int64
        var capacity: Int
        var holds: Bool

        init(offset: Int64, capacity: Int, holds: Bool) {
            self.offset = offset
            self.capacity = capacity
            self.holds = holds
        }

        init(_ packed: UInt64) {
            offset = Int64(packed >> 24) * Int64(Self.unit)
            capacity = Int((packed >> 1) & ((1 << 23) - 1)) * Self.unit
            holds = packed & 1 == 1
        }

        var packed: UInt64 {
            UInt64(offset / Int64(Self.unit)) << 24 | UInt64(capacity / Self.unit) << 1 | (holds ? 1 : 0)
        }
    }

    private func open() -> Bool {
        if fd >= 0 { return true }
        var template = Array((NSTemporaryDirectory() + "/ledger-export-states-XXXXXX").utf8CString)
        fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { failed = true; return false }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        return true
    }

    private func giveUp() {
        failed = true
        slots = [:]
    }

    /// A slot begins with the name's length, the version (-1: none) and the state's length.
    private static let header = 24
}
