import Foundation
import Glibc
import LedgerCore

/// Order states set aside once the memory kept for them is full, in an unlinked temporary
/// file (gone when the process ends, however it ends), one slot per name, reused while the
/// state fits; each state in its compact binary form (`OrderState.spillBytes`). With each
/// state go two numbers its owner chooses (`Marks`). A state read back, or kept in memory
/// again (`forget`), leaves the file (its slot stays for the next one): the reader's copy
/// is the current one from then on, and one dropped later without being set aside again
/// must not come back older than it was.
///
/// The folds that read the log in ledger order use it when an order's events lie far apart:
/// the events export's `status_after` (`StatusTracker`) reads a state back instead of
/// folding the order's earlier events again from the log, and `ledger rebuild`'s window
/// (`ShadowProjection`) instead of writing the row and loading it again. Memory: an index
/// entry per name set aside, not its state, and the new slots not written yet (`gathering`,
/// 256 KB). Should a write fail (no space, say), nothing more is set aside (`put` answers
/// false) and what is held stays; should a read fail, the file is given up and what it held
/// is gone (`load` and `drain` then throw).
package final class StateSpill {
    /// The two numbers kept with a state.
    package typealias Marks = (Int64, Int64)

    private var fd: Int32 = -1
    private var failed = false
    /// A read failed while the file held states: they are gone.
    private var lost = false
    /// The file's end, in `StateSpillIndex.Slot.unit`s.
    private var end = 0
    /// Each name's slot, by 32 bits of its hash in this process (`key`). Each slot holds the
    /// name too, so a hash shared by two names only costs one of them its copy.
    private var slots = StateSpillIndex()
    private var holding = 0
    private var buffer: [UInt8] = []
    /// The slots made since the last write of new ones, gathered in memory from the
    /// `gathered`-th unit of the file on, and written together once `gathering` bytes
    /// are: a fold that sets aside every order makes one write of 256 KB, not a write a
    /// state. The slots before `gathered` are read and rewritten in the file.
    private var fresh: [UInt8] = []
    private var gathered = 0
    private let gathering: Int
    /// Writes bytes at an offset of the file, as `pwrite` does (the count written, or -1):
    /// the tests' way to make a write fail, as a full disk would.
    package var writeAt: (_ fd: Int32, _ bytes: UnsafeRawBufferPointer, _ offset: off_t) -> Int = { fd, bytes, offset in
        pwrite(fd, bytes.baseAddress, bytes.count, offset)
    }
    /// States written, and read back.
    package private(set) var written = 0
    package private(set) var read = 0

    /// `gathering`: how many bytes of new slots are gathered before they are written
    /// together (0: each state is written as it is set aside).
    package init(gathering: Int = 256 << 10) { self.gathering = gathering }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// Which of the states a fold drops with a generation of `generation` it sets aside,
    /// `returns` of the orders it met out of memory since its last drop having come back:
    /// every one once at least 1 in 100 came back (a ledger whose orders' events lie far
    /// apart), else those of orders still waiting for their provider (awaiting payment, or
    /// confirming), whose events are to come; an order met paid, expired or in review is
    /// usually done.
    package static func setsAside(returns: Int, generation: Int) -> (OrderState) -> Bool {
        let all = returns * 100 >= generation
        return { all || $0.status == .awaitingPayment || $0.status == .confirming }
    }

    /// Whether no state is held.
    package var isEmpty: Bool { holding == 0 }

    /// Sets `state` aside under `name`, with `marks`. Returns false when it was not (the
    /// file failed, the state is too large, or the slot holds another name's state, whose
    /// hash this name shares): the caller keeps it some other way.
    @discardableResult
    package func put(_ name: String, _ state: OrderState, marks: Marks) -> Bool {
        guard !failed, open() else { return false }
        let key = Self.key(name)
        var slot = slots[key]
        if let held = slot, held.holds {
            // Its own earlier state (replaced), or another name's (kept: it is the only copy).
            guard let entry = readSlot(held) else { return false }
            guard entry.name.elementsEqual(name.utf8) else { return false }
            holding -= 1
            slot?.holds = false
            slots[key] = slot
        }
        let bytes = state.spillBytes()
        buffer.removeAll(keepingCapacity: true)
        for field in [Int64(name.utf8.count), marks.0, marks.1, Int64(bytes.count)] {
            withUnsafeBytes(of: field) { buffer.append(contentsOf: $0) }
        }
        buffer += name.utf8
        buffer += bytes
        if slot == nil || slot!.capacity < buffer.count {
            guard let sizeClass = StateSpillIndex.Slot.sizeClass(for: buffer.count),
                  end + (1 << sizeClass) <= StateSpillIndex.Slot.offsets else { return false }
            slot = StateSpillIndex.Slot(offsetUnits: end, sizeClass: sizeClass, holds: false)
            end += 1 << sizeClass
        }
        var target = slot!
        guard write(buffer, at: target) else {
            // Out of space, say: nothing more is set aside, and what is held stays readable.
            failed = true
            return false
        }
        target.holds = true
        slots[key] = target
        holding += 1
        written += 1
        return true
    }

    /// The state set aside under `name` and its marks, taken out of the file; nil when
    /// there is none. Throws when a read failed, or the state does not read back.
    package func load(_ name: String) throws -> (state: OrderState, marks: Marks)? {
        guard !lost else { throw StateSpillError.lost }
        let key = Self.key(name)
        guard let slot = slots[key], slot.holds else { return nil }
        guard let entry = readSlot(slot) else { throw StateSpillError.lost }
        guard entry.name.elementsEqual(name.utf8) else { return nil }
        release(key, slot)
        guard let state = entry.state() else { throw StateSpillError.lost }
        read += 1
        return (state, entry.marks)
    }

    /// `name`'s state is kept elsewhere from now on: any copy here is out of date.
    package func forget(_ name: String) {
        guard holding > 0 else { return }
        let key = Self.key(name)
        guard let slot = slots[key], slot.holds else { return }
        // Another name's state sharing the hash stays: it is the only copy.
        guard let entry = readSlot(slot), entry.name.elementsEqual(name.utf8) else { return }
        release(key, slot)
    }

    /// Every state held, in the file's order, each taken out of the file; then the file is
    /// emptied. Throws what `body` throws, or `StateSpillError` should a slot not read back.
    package func drain(_ body: (String, OrderState, Marks) throws -> Void) throws {
        defer { reset() }
        guard !lost else { throw StateSpillError.lost }
        let held = slots.slots.filter(\.holds).sorted { $0.offsetUnits < $1.offsetUnits }
        for slot in held {
            guard let entry = readSlot(slot), let state = entry.state() else { throw StateSpillError.lost }
            read += 1
            try body(String(decoding: entry.name, as: UTF8.self), state, entry.marks)
        }
    }

    /// Forgets everything, and gives the file's space back.
    package func reset() {
        lost = false
        slots.removeAll()
        holding = 0
        end = 0
        gathered = 0
        fresh = []
        if fd >= 0 { _ = ftruncate(fd, 0) }
    }

    private struct Entry {
        let name: ArraySlice<UInt8>
        let marks: Marks
        let stored: ArraySlice<UInt8>

        func state() -> OrderState? {
            try? stored.withUnsafeBytes { try OrderState(spillBytes: $0) }
        }
    }

    /// A slot's contents, read into the scratch buffer `put` also uses (one slot at a
    /// time, on one thread); nil when it cannot be read (what is held is then lost).
    private func readSlot(_ slot: StateSpillIndex.Slot) -> Entry? {
        if buffer.count < slot.capacity { buffer.append(contentsOf: repeatElement(0, count: slot.capacity - buffer.count)) }
        let got: Int
        if let at = gatheredOffset(slot) {
            // Not written yet: copied from memory.
            got = max(0, min(slot.capacity, fresh.count - at))
            if got > 0 { buffer.withUnsafeMutableBytes { b in fresh.withUnsafeBytes { b.baseAddress!.copyMemory(from: $0.baseAddress! + at, byteCount: got) } } }
        } else {
            got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, slot.capacity, off_t(slot.offset)) }
        }
        guard got >= Self.header else { giveUp(); return nil }
        let (nameCount, first, second, stateCount) = buffer.withUnsafeBytes {
            (Int($0.loadUnaligned(as: Int64.self)), $0.loadUnaligned(fromByteOffset: 8, as: Int64.self),
             $0.loadUnaligned(fromByteOffset: 16, as: Int64.self), Int($0.loadUnaligned(fromByteOffset: 24, as: Int64.self)))
        }
        let h = Self.header
        guard nameCount >= 0, stateCount >= 0, h + nameCount + stateCount <= got else { return nil }
        return Entry(name: buffer[h..<(h + nameCount)], marks: (first, second),
                     stored: buffer[(h + nameCount)..<(h + nameCount + stateCount)])
    }

    /// Writes `bytes` to `slot`: into the new slots gathered in memory, written out once they
    /// are `gathering` bytes, or to the file for a slot made before. False when a write failed
    /// (the slots gathered then stay in memory, readable).
    private func write(_ bytes: [UInt8], at slot: StateSpillIndex.Slot) -> Bool {
        guard let at = gatheredOffset(slot) else {
            return bytes.withUnsafeBytes { writeAt(fd, $0, off_t(slot.offset)) } == bytes.count
        }
        // Its room made once, not grown by doubling: the memory a fold may use is counted.
        if fresh.capacity == 0 { fresh.reserveCapacity(gathering + 2 * StateSpillIndex.Slot.unit) }
        if fresh.count < at + bytes.count { fresh.append(contentsOf: repeatElement(0, count: at + bytes.count - fresh.count)) }
        fresh.withUnsafeMutableBytes { f in bytes.withUnsafeBytes { (f.baseAddress! + at).copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
        guard fresh.count >= gathering else { return true }
        let start = off_t(gathered) * off_t(StateSpillIndex.Slot.unit)
        guard fresh.withUnsafeBytes({ writeAt(fd, $0, start) }) == fresh.count else { return false }
        gathered = end
        fresh.removeAll(keepingCapacity: true)
        return true
    }

    /// Where `slot` lies in `fresh`; nil when it was made before the last write of new slots
    /// (it is in the file).
    private func gatheredOffset(_ slot: StateSpillIndex.Slot) -> Int? {
        slot.offsetUnits >= gathered ? (slot.offsetUnits - gathered) * StateSpillIndex.Slot.unit : nil
    }

    private func release(_ key: UInt32, _ slot: StateSpillIndex.Slot) {
        var freed = slot
        freed.holds = false
        slots[key] = freed
        holding -= 1
    }

    private func open() -> Bool {
        if fd >= 0 { return true }
        var template = Array((NSTemporaryDirectory() + "/ledger-states-XXXXXX").utf8CString)
        fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { failed = true; return false }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        return true
    }

    /// A slot did not read back: the file is given up, and what it held is lost.
    private func giveUp() {
        lost = lost || holding > 0
        failed = true
        slots.removeAll()
        holding = 0
        fresh = []
    }

    /// The index's key for `name`: 32 bits of its hash in this process.
    package static func key(_ name: String) -> UInt32 { UInt32(truncatingIfNeeded: name.hashValue) }

    /// A slot begins with the name's length, the two marks and the state's length.
    private static let header = 32
}

/// States set aside could not all be read back (a read of the file failed).
package enum StateSpillError: Error, CustomStringConvertible {
    case lost
    package var description: String {
        "order states set aside in a temporary file in TMPDIR could not be read back"
    }
}
