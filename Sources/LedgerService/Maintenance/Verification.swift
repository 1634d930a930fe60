import Foundation
import LedgerCore
import LedgerPostgres

/// `ledger verify`: reads the log once (`EventLogScan`: a binary COPY in stream order),
/// checking every link of the hash chain and every stored signature on one thread while
/// another folds each order's stream and compares it with its read-model row (read by a
/// third, `OrderRowScan`), all in one snapshot shared by three connections.
package struct Verification: Sendable {
    package init() {}

    package static let progressEvery: Int64 = 10_000
    /// Events handed from the scanning thread to the folding one at a time, and how many
    /// such batches may wait (memory stays bounded).
    static let batchEvents = 1_000
    static let waitingBatches = 8

    package struct Report: Sendable {
        /// The hash chain: intact, or broken at its lowest broken position.
        package var chain: ChainVerdict
        package var events: Int64
        package var head: Int64
        /// The read-model differences, counted by field (each was handed to `each` as found).
        package var summary: DifferenceSummary
        /// The stored signatures checked again, when keys were given.
        package var signatures: SignatureRecheck?
        /// The streams of the log (each order's and each enrollment's).
        package var streams: Int64
    }

    /// The report of the whole pass, a broken chain included (`Report.chain` names its
    /// lowest broken position; the differences found are a replay of the log as it is now).
    /// Each read-model difference goes to `each` as it is found (the order or enrollment
    /// and every field that differs), so memory does not grow with them.
    /// With `signatures`, every signed event is checked again as the log is scanned.
    /// `progress` is told how many events have been checked, every `progressEvery`.
    /// `inSnapshot` runs last, in the snapshot the log was read in (the checkpoint notes'
    /// check, so a note is compared with the chain the scan walked, not one grown since).
    package func run(on connection: PostgresConnection, signatures: SignatureRecheck? = nil,
                     progress: (Int64) -> Void = { _ in }, inSnapshot: (PostgresConnection) throws -> Void = { _ in },
                     each: (ReadModelDifference) -> Void = { _ in }) throws -> Report {
        try connection.readOnlySnapshot { c in
            // Before the snapshot is taken (a LOCK takes none): a rebuild's swap then either
            // finished before it or waits for verify, never leaving verify a swapped-in table
            // read with an older snapshot (rows its catch-up wrote missing: false differences).
            try c.query("LOCK TABLE ledger.orders, ledger.enrollments IN ACCESS SHARE MODE")
            let snapshot = try SharedSnapshot.export(from: c)
            let scanner = try PostgresConnection(connectionString: c.connectionString)
            defer { scanner.close() }
            // The read-model rows, in order-number order, on a third connection (opened
            // before any thread starts: nothing below throws until they are running).
            let rowReader = try PostgresConnection(connectionString: c.connectionString)
            defer { rowReader.close() }
            let handOff = BatchHandOff<ScannedEvent>(capacity: Self.waitingBatches)
            let scan = ScanThread(scanner: scanner, snapshot: snapshot, signatures: signatures, handOff: handOff)
            Thread(block: scan.run).start()
            let rows = ReadingThread<QueryResult>(capacity: 2) { put in
                try snapshot.join(on: rowReader) { r in try OrderRowScan().run(on: r) { try put([$0]) } }
            }
            defer { rows.stop() }
            let nextPage: () throws -> QueryResult? = { try rows.next()?.first }   // one page a batch

            var summary = DifferenceSummary()
            var streams: Int64 = 0
            var folded: Int64 = 0
            try withoutActuallyEscaping(each) { each in
                let orders = OrderStreamCheck(pages: nextPage) { difference in
                    summary.add(difference)
                    each(difference)
                }
                do {
                    while let batch = try handOff.take() {
                        for event in batch {
                            try orders.add(event)
                            folded += 1
                            if folded % Self.progressEvery == 0 { progress(folded) }
                        }
                    }
                } catch {
                    handOff.abandon()
                    handOff.waitUntilEnded()
                    throw error
                }
                try orders.finish()
                streams = orders.streams
            }
            var (links, recheck) = scan.outcome()
            try links.widenMissingRun { try EventStore().highestPosition(below: $0, on: c) }
            try ReadModelCheck().checkEnrollments(on: c) { difference in
                summary.add(difference)
                each(difference)
            }
            try inSnapshot(c)
            return Report(chain: links.verdict, events: links.events, head: links.head, summary: summary,
                          signatures: recheck, streams: streams)
        }
    }
}

/// The scanning side of `Verification`, on a thread of its own with a connection of its
/// own in the shared snapshot: each event's chain link and stored signature are checked,
/// and its canonical form parsed, then the event is handed on to be folded.
private final class ScanThread: @unchecked Sendable {
    // @unchecked: `links` and `recheck` are written by the scanning thread only, and read
    // by the folding thread only after `handOff` says the scan has ended.
    let scanner: PostgresConnection
    let snapshot: SharedSnapshot
    let handOff: BatchHandOff<ScannedEvent>
    private var links = ChainLinkCheck()
    private var recheck: SignatureRecheck?

    init(scanner: PostgresConnection, snapshot: SharedSnapshot, signatures: SignatureRecheck?, handOff: BatchHandOff<ScannedEvent>) {
        self.scanner = scanner
        self.snapshot = snapshot
        self.recheck = signatures
        self.handOff = handOff
    }

    func run() {
        do {
            try snapshot.join(on: scanner) { s in
                var batch: [ScannedEvent] = []
                batch.reserveCapacity(Verification.batchEvents)
                var scratch: [UInt8] = []
                try EventLogScan().run(on: s) { row, previousHash in
                    links.check(row, previousHash: previousHash, scratch: &scratch)
                    // The metadata is parsed once, for the recheck and the canonical event.
                    let metadata = Result { try row.metadata() }
                    if recheck != nil, case .success(let parsed) = metadata {
                        recheck!.check(position: row.position, source: row.source, metadata: parsed, raw: row.raw)
                    }
                    batch.append(ScannedEvent(row, metadata: metadata))
                    if batch.count == Verification.batchEvents {
                        try handOff.put(batch)
                        batch.removeAll(keepingCapacity: true)
                    }
                }
                if !batch.isEmpty { try handOff.put(batch) }
            }
            handOff.end(nil)
        } catch {
            handOff.end(error)
        }
    }

    /// What the scan found; call once `handOff` has ended.
    func outcome() -> (ChainLinkCheck, SignatureRecheck?) {
        handOff.waitUntilEnded()
        return (links, recheck)
    }
}
