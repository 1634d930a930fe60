import Foundation
import LedgerCore
import LedgerPostgres

/// The read half of a rebuild's build, on a thread of its own: it streams the log in
/// ledger order (`EventLogStream`), walks the hash chain from genesis and maps each
/// event, and hands batches of verified events to the thread that folds and writes
/// them. Reading, hashing and parsing then overlap with rendering and PostgreSQL's
/// writes. A break, or an unreadable event, ends the hand-off with its error: the folding
/// thread rethrows it, and nothing it wrote survives (its transaction rolls back).
final class RebuildScan: @unchecked Sendable {
    // @unchecked: `chain` is written by the scan thread only, before `handOff.end`, and read
    // by the other thread only after `take` returned nil (the hand-off's lock orders the two).
    let handOff = BatchHandOff<ShadowProjection.Item>(capacity: 8)
    private let reader: PostgresConnection
    private let batchSize: Int
    /// The share of its time the reading thread works (`Rebuild.pace`).
    private let pace: Double
    /// Rows a FETCH when paced: about 256 KB of the log, a fraction of a millisecond of
    /// PostgreSQL's work.
    static let pacedFetch = 256

    /// The walk's end: the head and its hash, once the hand-off ended without an error.
    private(set) var chain = ChainContinuation.genesis

    init(reader: PostgresConnection, batchSize: Int, pace: Double = 1) {
        self.reader = reader
        self.batchSize = batchSize
        self.pace = pace
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func run() {
        var walk = ChainContinuation.genesis
        var batch: [ShadowProjection.Item] = []
        batch.reserveCapacity(batchSize)
        let duty = DutyCycle(share: pace)
        var scratch: [UInt8] = []
        do {
            // Paced, through a cursor a few hundred rows a FETCH: PostgreSQL reads only as
            // this thread asks, so its reading is paced with the thread's own work.
            try EventLogStream().runWhole(on: reader, fetching: pace < 1 ? Self.pacedFetch : nil) { event in
                duty.step()
                if case .broken(let position, let reason) = walk.check(event, scratch: &scratch) {
                    throw MaintenanceError.chainBroken(position: position, reason + "; nothing was rebuilt")
                }
                batch.append(ShadowProjection.Item(event, try Rebuild.readable(event)))
                if batch.count == batchSize {
                    try handOff.put(batch)
                    duty.rested()
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if !batch.isEmpty { try handOff.put(batch) }
            chain = walk
            handOff.end(nil)
        } catch {
            handOff.end(error)
        }
    }
}
