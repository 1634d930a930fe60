import Foundation
import LedgerCore
import LedgerPostgres

/// `ledger rebuild`: builds ledger.orders and ledger.enrollments again from the events,
/// online, and never from a log whose hash chain is broken.
///
/// 1. Build: in one transaction, new tables (`ShadowTables`) are created and filled
///    from the whole log, streamed in order by one binary COPY (`EventLogStream`) with
///    every hash recomputed from genesis (`ChainContinuation`) on a thread of its own
///    (`RebuildScan`), while this one folds and writes; rows go in by binary COPY,
///    frozen. Paced, the tables have every index from the start, kept up as the rows go
///    in, so that no index build holds a core at the end; at full pace only the key index.
/// 2. Catch up: the events appended meanwhile are verified (the chain walked on,
///    `ChainContinuation`) and folded into the new tables; at full pace the other indexes
///    are built then; the tables are analyzed; catching up goes on until a round finds few
///    events.
/// 3. Swap: one transaction takes the append lock (writers wait from here), folds the
///    last events, locks the live tables (readers wait from here), renames them away
///    and the new ones into their places, and commits; the old tables are dropped after. Each lock wait is bounded by
///    a short lock_timeout; an attempt that runs out rolls back whole (nothing swapped)
///    and is tried again after catching up (`RebuildSchedule`).
///
/// Until the swap commits the live read models are untouched; on any failure the new
/// tables are dropped. A rebuild that dies leaves at most its new tables, which the next
/// one drops first. One rebuild runs at a time (a session advisory lock).
package struct Rebuild: Sendable {
    package var schedule = RebuildSchedule()
    /// Orders per generation of the fold's window (`ShadowProjection`).
    package var generation = 8192
    /// The share of the build's time spent working (0 < pace <= 1): below 1, the thread that
    /// reads and the one that folds and writes each pause after every quarter millisecond of
    /// work, for as long as it worked times (1 / pace - 1) (`DutyCycle`); the log is read
    /// through a cursor and the new rows stored a small piece at a time, so that PostgreSQL's
    /// work for it falls within those bursts too, leaving the cores to the service in short gaps.
    package var pace = 1.0
    /// Run once the build has committed, before the first catch-up (tests append there what
    /// must arrive while a rebuild runs).
    package var afterBuild: (@Sendable () throws -> Void)?

    package init() {}

    /// Whether the new tables get every index before they fill: when paced. Built after the
    /// fill, sorted, they cost less in all but hold a core for seconds at a stretch, and the
    /// service's writes wait for it; kept up row by row, they cost the fill's own short
    /// bursts (docs/operations.md, *Rebuilding the read models*).
    var keepsIndexesUp: Bool { pace < 1 }

    static let pageSize = 2000
    /// The session advisory lock one rebuild holds throughout (the append lock's key + 1).
    package static let rebuildLockKey: Int64 = AppendLock.key + 1

    /// What a rebuild did.
    package struct Outcome: Sendable {
        /// Events folded: the head of the log when the swap committed.
        package var events: Int64
        /// Events that arrived while it built, folded by catching up (the last tail included).
        package var caughtUp: Int64
        package var swapAttempts: Int
        /// How long the successful swap held the append lock (writers waited at most this).
        package var swapSeconds: Double
        package var seconds: Double
        /// Seconds each step took: build, catch-up, indexes, catch-up, swap; then the swap's
        /// own steps, in seconds since it took the append lock.
        package var phases: [(String, Double)] = []
        /// Why earlier swap attempts rolled back (PostgreSQL's words), and how long each took.
        package var refusals: [String] = []
    }

    /// Rebuilds with two connections: `reader` streams the log, `writer` fills the new
    /// tables and swaps them in. Throws `MaintenanceError` naming the first broken position,
    /// or the unreadable event, with the read models as they were.
    package func run(reader: PostgresConnection, writer: PostgresConnection) throws -> Outcome {
        let began = ContinuousClock.now
        let taken = try writer.query("SELECT pg_try_advisory_lock($1) AS taken", [.int(Self.rebuildLockKey)])
        guard try taken.string(0, "taken") == "t" else { throw MaintenanceError.rebuildRunning }
        // The lock lives as long as this session: each writer transaction below first checks
        // it still holds it (the connection remade between steps would have lost the lock).
        let lock = SessionLock(key: Self.rebuildLockKey)
        defer { _ = try? writer.query("SELECT pg_advisory_unlock($1)", [.int(Self.rebuildLockKey)]) }
        let shadows = ShadowTables()
        var phases: [(String, Double)] = []
        var mark = ContinuousClock.now
        func lap(_ name: String) {
            phases.append((name, Self.seconds(since: mark)))
            mark = .now
        }
        // The new tables are dropped only while the lock is still held: otherwise they may be
        // another rebuild's by now, and the next rebuild drops them.
        func dropOwnLeftovers() { if (try? lock.require(on: writer)) != nil { try? shadows.dropLeftovers(on: writer) } }
        let built: (ChainContinuation, sawForeignStream: Bool, enrollments: ShadowProjection.Memory)
        do {
            built = try build(reader: reader, writer: writer, shadows, lock)
        } catch {
            dropOwnLeftovers()
            throw error
        }
        var (chain, sawForeignStream, enrollments) = built
        lap("build")
        // The catch-up goes on from the build's fold: its enrollments (held whole, not reloaded
        // from their rows) too, or an enrollment's event caught up would start its state anew.
        let projection = ShadowProjection(generation: generation, pageSize: Self.pageSize, sawForeignStream: sawForeignStream)
        projection.restore(enrollments)
        do {
            try afterBuild?()
            var caughtUp = try lock.transaction(on: writer) { try catchUp(&chain, projection, on: $0) }
            lap("catch-up")
            try lock.transaction(on: writer) { t in
                if !keepsIndexesUp { try shadows.createIndexes(on: t) }
                try shadows.analyze(on: t)
            }
            lap(keepsIndexesUp ? "statistics" : "indexes")
            var round = 1
            while true {
                let events = try lock.transaction(on: writer) { try catchUp(&chain, projection, on: $0) }
                caughtUp += events
                round += 1
                if schedule.afterCatchUp(round: round, events: Int(events)) == .trySwap { break }
            }
            lap("catch-up")
            let swap = try swapIn(&chain, projection, shadows, writer: writer, lock)
            lap("swap")
            try shadows.dropRetired(on: writer)
            lap("drop the old tables")
            phases += swap.steps.map { ("swap: " + $0.0, $0.1) }
            return Outcome(events: chain.head, caughtUp: caughtUp + swap.tail, swapAttempts: swap.attempts,
                           swapSeconds: swap.held, seconds: Self.seconds(since: began), phases: phases,
                           refusals: swap.refusals)
        } catch {
            dropOwnLeftovers()
            throw error
        }
    }

    /// Step 1 on `writer`: the new tables, made in a short transaction of their own (making
    /// them `LIKE` the live tables locks those until commit: the fill must not hold that lock,
    /// or an `ALTER TABLE` waiting behind it would hold up every write), then filled from the
    /// whole log as `reader` streams it, in one transaction. Returns the verified chain's head,
    /// whether an event lay in another order's stream, and the enrollments folded. Should the
    /// fill throw, it rolls back, and `run` drops the new tables.
    private func build(reader: PostgresConnection, writer: PostgresConnection, _ shadows: ShadowTables, _ lock: SessionLock) throws
        -> (ChainContinuation, sawForeignStream: Bool, enrollments: ShadowProjection.Memory) {
        try lock.transaction(on: writer) { w in
            do {
                try shadows.refuseUnknownDependents(on: w)
            } catch let error as ShadowTablesError {
                throw MaintenanceError.rebuildRefused(error.description)
            }
            try shadows.dropLeftovers(on: w)
            try shadows.create(on: w)
            if keepsIndexesUp { try shadows.createIndexes(on: w) }
        }
        return try lock.transaction(on: writer) { w in
            try shadows.truncate(on: w)   // emptied in the fill's transaction: its COPY FREEZE holds
            let duty = DutyCycle(share: pace)
            let projection = ShadowProjection(generation: generation, pageSize: Self.pageSize, freeze: true, duty: duty)
            let scan = RebuildScan(reader: reader, batchSize: Self.pageSize, pace: pace)
            scan.start()
            do {
                while let batch = try scan.handOff.take() {
                    duty.rested()
                    for item in batch { try projection.add(item, on: w) }
                }
            } catch {
                scan.handOff.abandon()
                scan.handOff.waitUntilEnded()   // the reader's COPY cancelled before the connection is used again
                throw error
            }
            let chain = scan.chain
            try projection.flush(on: w)
            return (chain, projection.sawForeignStream, projection.memory)
        }
    }

    /// Folds, in the caller's transaction, every event after the chain's head into the new
    /// tables, each verified as it is read. Returns how many there were.
    private func catchUp(_ chain: inout ChainContinuation, _ projection: ShadowProjection, on c: PostgresConnection) throws -> Int64 {
        var count: Int64 = 0
        let store = EventStore()
        while true {
            let events = try store.read(after: chain.head, limit: Self.pageSize, on: c)
            for event in events {
                if case .broken(let position, let reason) = chain.check(event) {
                    throw MaintenanceError.chainBroken(position: position, reason + "; nothing was rebuilt")
                }
                try projection.add(ShadowProjection.Item(event, Self.readable(event)), on: c)
            }
            count += Int64(events.count)
            if events.count < Self.pageSize { break }
        }
        try projection.flush(on: c)
        return count
    }

    /// Step 3: swap attempts until one commits, or the schedule gives up.
    private func swapIn(_ chain: inout ChainContinuation, _ projection: ShadowProjection, _ shadows: ShadowTables,
                        writer: PostgresConnection, _ lock: SessionLock) throws -> (attempts: Int, tail: Int64, held: Double, refusals: [String], steps: [(String, Double)]) {
        let first = ContinuousClock.now
        var refusals: [String] = []
        var steps: [(String, Double)] = []
        var attempt = 0
        var tail: Int64 = 0
        while true {
            attempt += 1
            let (savedChain, savedMemory) = (chain, projection.memory)
            var lockedAt: ContinuousClock.Instant?
            let attemptBegan = ContinuousClock.now
            steps = []
            do {
                let folded = try lock.transaction(on: writer) { w -> Int64 in
                    try w.query("SET LOCAL lock_timeout = '\(schedule.lockTimeoutMilliseconds)ms'")
                    try w.query("SELECT pg_advisory_xact_lock($1)", [.int(AppendLock.key)])   // writers wait from here
                    lockedAt = .now
                    let folded = try catchUp(&chain, projection, on: w)
                    steps.append(("tail \(folded)", Self.seconds(since: lockedAt!)))
                    try shadows.swap(on: w)
                    steps.append(("swapped", Self.seconds(since: lockedAt!)))
                    return folded
                }
                steps.append(("committed", lockedAt.map(Self.seconds(since:)) ?? 0))
                return (attempt, tail + folded, lockedAt.map(Self.seconds(since:)) ?? 0, refusals, steps)
            } catch let error as PostgresError where error.sqlState == "55P03" || error.sqlState == "40P01" {   // lock_not_available, deadlock_detected
                chain = savedChain
                projection.restore(savedMemory)
                refusals.append("\(error.description) after \(Int(Self.seconds(since: attemptBegan) * 1000)) ms"
                                + (lockedAt == nil ? " waiting for the append lock" : " holding the append lock"))
                switch schedule.afterRefusedSwap(attempt: attempt, elapsed: Self.seconds(since: first)) {
                case .giveUp:
                    throw MaintenanceError.swapNotTaken(seconds: Self.seconds(since: first), attempts: attempt,
                                                        holders: (try? Self.holders(on: writer)) ?? [])
                case .after(let pause):
                    Thread.sleep(forTimeInterval: pause)
                    tail += try lock.transaction(on: writer) { try catchUp(&chain, projection, on: $0) }
                }
            }
        }
    }

    /// The sessions holding locks on the live read models, in words.
    private static func holders(on c: PostgresConnection) throws -> [String] {
        let found = try c.query("""
            SELECT DISTINCT a.pid, coalesce(a.application_name, '') AS app, a.state, left(a.query, 80) AS query
              FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
             WHERE l.granted AND l.relation IN ('ledger.orders'::regclass, 'ledger.enrollments'::regclass)
               AND a.pid <> pg_backend_pid()
            """)
        return try (0..<found.count).map {
            "pid \(try found.string($0, "pid")) (\(try found.string($0, "state"))): \(try found.string($0, "query"))"
        }
    }

    static func seconds(since instant: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - instant
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func readable(_ stored: StoredEvent) throws -> RecordedEvent {
        do {
            return try EventMapping.recorded(stored)
        } catch {
            throw MaintenanceError.unreadableEvent(position: stored.position, String(describing: error))
        }
    }

    /// `readable(_:)` of an event read in place.
    static func readable(_ row: EventCopyRow) throws -> RecordedEvent {
        do {
            return try row.recorded()
        } catch {
            throw MaintenanceError.unreadableEvent(position: row.position, String(describing: error))
        }
    }
}

/// A session advisory lock: `require` fails, before anything else is done in a transaction,
/// once the connection's session no longer holds it (remade after a drop, which released it).
struct SessionLock {
    let key: Int64

    /// `body` in a transaction on `c` that first checks the lock is still held.
    func transaction<T>(on c: PostgresConnection, _ body: (PostgresConnection) throws -> T) throws -> T {
        try c.transaction { t in
            try require(on: t)
            return try body(t)
        }
    }

    func require(on c: PostgresConnection) throws {
        let held = try c.query("""
            SELECT EXISTS (SELECT 1 FROM pg_locks
                            WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objsubid = 1
                              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                              AND ((classid::bigint << 32) | objid::bigint) = $1) AS held
            """, [.int(key)])
        guard try held.string(0, "held") == "t" else { throw MaintenanceError.rebuildLockLost }
    }
}
