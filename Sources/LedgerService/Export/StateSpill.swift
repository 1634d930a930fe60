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
    /// By the stream's hash in this process: its slot's offset and size, and whether it holds
    /// a state. Each slot holds the stream's name too, so a hash shared by two streams only
    /// costs one of them a replay.
    private var slots: [Int: (offset: Int64, capacity: Int, holds: Bool)] = [:]
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
        let key = stream.hashValue
        var slot = slots[key] ?? (offset: end, capacity: 0, holds: false)
        if slot.capacity < buffer.count {
            slot = (offset: end, capacity: (buffer.count * 5 / 4 + 255) & ~255, holds: false)
            end += Int64(slot.capacity)
        }
        let wrote = buffer.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(slot.offset)) }
        guard wrote == buffer.count else { return giveUp() }
        slot.holds = true
        slots[key] = slot
        written += 1
    }

    /// The state set aside for `stream` and the version folded into it, taken out of the
    /// file; nil when there is none.
    func load(_ stream: String) -> (state: OrderState, version: Int?)? {
        let key = stream.hashValue
        guard !failed, let slot = slots[key], slot.holds else { return nil }
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
        slots[key]?.holds = false
        guard let state = try? stored.withUnsafeBufferPointer({ try OrderState(storage: JSONValue.parse(stored: $0)) }) else { return nil }
        read += 1
        return (state, version < 0 ? nil : Int(version))
    }

    /// `stream`'s state is kept elsewhere from now on: any copy here is out of date.
    func forget(_ stream: String) {
        guard !slots.isEmpty else { return }
        slots[stream.hashValue]?.holds = false
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
