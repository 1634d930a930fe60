import Foundation
import LedgerCore
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Synchronization
import Testing

/// `ledger rebuild` is online: it builds new tables while the service writes and answers,
/// catches up, and swaps them in under a lock held only for the swap. Nothing is lost,
/// no write waits long, no reader ever finds the table missing, and whatever goes wrong
/// leaves the live read models as they were.
@Suite("Online rebuild")
struct OnlineRebuildTests {
    static func rebuild(_ url: String, _ configure: (inout Rebuild) -> Void = { _ in }) throws -> Rebuild.Outcome {
        let reader = try PostgresConnection(connectionString: url), writer = try PostgresConnection(connectionString: url)
        defer { reader.close(); writer.close() }
        var rebuild = Rebuild()
        configure(&rebuild)
        return try rebuild.run(reader: reader, writer: writer)
    }

    static func pool(_ url: String, size: Int = 2) -> ConnectionPool {
        ConnectionPool(configuration: DatabaseConfiguration(connectionString: url, poolSize: size))
    }

    static func shadows(_ c: PostgresConnection) throws -> Int64 {
        try c.query("SELECT count(*) AS n FROM pg_class WHERE relnamespace = 'ledger'::regnamespace AND (relname LIKE '%\\_next' OR relname LIKE '%\\_old')")
            .int64(0, "n")
    }

    /// The schema as Ops/schema prints it (pg_dump --schema-only, normalised).
    static func schema(_ url: String) throws -> String {
        let root = URL(fileURLWithPath: TestDatabase.migrationsDirectory).deletingLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [root.appendingPathComponent("Ops/schema").path, "--stdout", url]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "Ops/schema --stdout failed")
        return String(decoding: data, as: UTF8.self)
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }

    /// Fills new shadow tables through `projection` in one transaction: every stream's
    /// first event, then every later one (so orders fall out of a small window in between).
    /// Folds the log into new shadows: every stream's first event first, then the rest
    /// (`firstEventsFirst`), or in ledger order.
    static func fillShadows(_ projection: ShadowProjection, firstEventsFirst: Bool = true, on c: PostgresConnection) throws {
        try c.transaction { t in
            try ShadowTables().dropLeftovers(on: t)
            try ShadowTables().create(on: t)
            let events = try EventStore().read(after: 0, limit: 10_000, on: t)
            let order = firstEventsFirst ? events.filter({ $0.streamVersion == 1 }) + events.filter({ $0.streamVersion > 1 }) : events
            for event in order {
                try projection.add(ShadowProjection.Item(event, try EventMapping.recorded(event)), on: t)
            }
            try projection.flush(on: t)
        }
    }

    @Test("a rebuild under a steady load of signed webhooks to a served ledger loses nothing, answers no 503, keeps every wait under a second, and verify is clean after")
    func rebuildUnderWebhookLoad() throws {
        let ledger = try LedgerFixture.start("rebuildload", poolSize: 4)
        try TestWrites(pool: Self.pool(ledger.databaseURL)).registrations(10_000)
        let load = WebhookLoad(port: ledger.port, threads: 4, prefix: "RBL", orders: 40, limit: 100_000, pause: 5_000)
        #expect(load.waitForAcknowledged(200, within: 20))
        Thread.sleep(forTimeInterval: 2)
        let rebuildBegan = load.requests.count
        let started = Date()
        let outcome = try Self.rebuild(ledger.databaseURL)
        let rebuildEnded = load.requests.count
        let startedAt = started.timeIntervalSince(load.began)
        Thread.sleep(forTimeInterval: 1)
        load.stop()

        let requests = load.requests
        let before = requests[..<rebuildBegan].map(\.seconds), during = requests[rebuildBegan..<rebuildEnded].map(\.seconds)
        let p99Before = Self.percentile(before, 0.99), p99During = Self.percentile(during, 0.99)
        print("online rebuild under load: \(outcome.events) events in \(outcome.seconds) s, \(outcome.caughtUp) caught up, "
              + "swap held writers \(outcome.swapSeconds * 1000) ms in \(outcome.swapAttempts) attempt(s); "
              + "p99 \(p99Before * 1000) ms before, \(p99During * 1000) ms during (\(during.count) requests), longest \(load.longestRequest * 1000) ms")
        let slow = requests.filter { $0.seconds > 0.5 }.map { "\(($0.began - startedAt) * 1000) ms +\($0.seconds * 1000)" }
        print("slow requests (began after the rebuild's start, took): \(slow.prefix(20)); phases \(outcome.phases), refusals \(outcome.refusals)")
        #expect(outcome.caughtUp > 0, "webhooks arrived while it built, and were caught up")
        #expect(during.count > 20, "the load ran through the rebuild")
        #expect(load.statuses.keys.sorted() == [200], "every write answered 200, none 503: \(load.statuses)")
        #expect(load.unusual.isEmpty, "\(load.unusual.prefix(3))")
        // The swap is the only time writers wait for the rebuild: for the append lock (at most the
        // lock_timeout) and while it is held. Beyond that, on a machine that also stalls writes
        // without any rebuild (a shared CI host), a write may take as long as it did before.
        #expect(outcome.swapSeconds < 0.5, "the swap held writers \(outcome.swapSeconds) s")
        let longestBefore = before.max() ?? 0, longestDuring = during.max() ?? 0
        #expect(longestDuring < 1.0 || longestDuring <= longestBefore * 1.2,
                "no write waited a second during the rebuild: the longest took \(longestDuring) s (\(longestBefore) s before it)")
        try expectEveryAcknowledgedStoredOnce(load.acknowledged, databaseURL: ledger.databaseURL, after: "an online rebuild")
        // Every acknowledged event is folded into its order's row.
        let unfolded = try ledger.count("""
            SELECT count(*) AS n FROM ledger.events e JOIN ledger.orders o ON o.merchant_order_no = substr(e.stream, 7)
             WHERE e.stream LIKE 'order-RBL-%' AND o.last_position < e.position
            """)
        #expect(unfolded == 0)
        #expect(try ledger.count("SELECT count(*) AS n FROM ledger.orders WHERE merchant_order_no LIKE 'RBL-%'") == 160)
        let c = try ledger.connect()
        defer { c.close() }
        let report = try Verification().run(on: c)
        #expect(report.summary.total == 0, "ledger verify is clean after the rebuild")
        #expect(try Self.shadows(c) == 0)
        // The service goes on writing and reading after the swap (its prepared statements re-planned).
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("RBL-after", status: 1)).status == 200)
        #expect(try ledger.order("RBL-after").status == 200)
    }

    @Test("the swap with a reader and a writer active is atomic: the table is never missing or empty, prepared statements follow it, and the service role keeps its grants")
    func swapIsAtomic() throws {
        let db = try TestDatabase.create("rebuildswap")
        defer { LedgerFixture.drop(db) }
        try TestWrites(pool: db.pool(size: 2)).registrations(3_000)
        let stop = Atomic<Bool>(false)
        let failures = Mutex<[String]>([])
        let lowest = Mutex<Int64>(.max)
        let written = Atomic<Int>(0)
        let group = DispatchGroup()
        group.enter()
        Thread {   // a reader, with a prepared statement and a plain one
            defer { group.leave() }
            guard let c = try? PostgresConnection(connectionString: db.serviceURL) else { return }
            defer { c.close() }
            while !stop.load(ordering: .relaxed) {
                do {
                    let n = try c.query("SELECT count(*) AS n FROM ledger.orders").int64(0, "n")
                    lowest.withLock { $0 = min($0, n) }
                    let one = try c.query("SELECT status FROM ledger.orders WHERE merchant_order_no = $1", [.text("P-00007")], prepared: true)
                    if one.count != 1 { failures.withLock { $0.append("P-00007 missing") } }
                } catch {
                    failures.withLock { $0.append("reader: \(error)") }
                }
            }
        }.start()
        group.enter()
        Thread {   // a writer, as the service writes (its upsert prepared), as the service role
            defer { group.leave() }
            let pool = Self.pool(db.serviceURL, size: 1)
            let committer = GroupCommitter(pool: pool, projector: OrderProjection())
            defer { committer.shutdown(); pool.close() }
            var n = 0
            while !stop.load(ordering: .relaxed) {
                do {
                    let registration = try OrderRequests.registration(
                        body: Array(#"{"merchantOrderNo":"SW-\#(n)","provider":"web3","amount":"1.00","asset":"USDT"}"#.utf8),
                        receivedAt: .now())
                    let receipt = Receipt(requestID: "test", verifiedBy: "token:test")
                    let outcome = try committer.append([EventMapping.newEvent(.registered(registration), raw: nil, receipt: receipt)])
                    guard case .appended = outcome.first else { throw PostgresError.unexpectedResult("\(outcome)") }
                    n += 1
                    written.store(n, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("writer: \(error)") }
                }
            }
        }.start()
        for _ in 0..<3 {
            let outcome = try Self.rebuild(db.url)
            #expect(outcome.swapAttempts >= 1)
        }
        stop.store(true, ordering: .relaxed)
        group.wait()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { Array($0.prefix(3)) })")
        #expect(lowest.withLock { $0 } >= 3_000, "no reader ever saw the table missing rows")
        let c = try db.connect()
        defer { c.close() }
        #expect(written.load(ordering: .relaxed) > 0)
        #expect(try c.query("SELECT count(*) AS n FROM ledger.orders WHERE merchant_order_no LIKE 'SW-%'").int64(0, "n")
                == Int64(written.load(ordering: .relaxed)))
        #expect(try LedgerFixture.verify(databaseURL: db.url) == [])
    }

    @Test("a rebuild leaves the schema as the migrations made it: tables, constraints, indexes, storage, statistics targets, comments and grants; paced, with the indexes made before the fill",
          arguments: [1.0, 0.5])
    func schemaSurvives(pace: Double) throws {
        let db = try TestDatabase.create("rebuildschema")
        defer { LedgerFixture.drop(db) }
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("SC-1")
        try TestWrites(pool: db.pool(size: 1)).enrollment("SE-1")
        let before = try Self.schema(db.url)
        let outcome = try Self.rebuild(db.url) { $0.pace = pace }
        #expect(try Self.schema(db.url) == before)
        let steps = outcome.phases.map(\.0)
        #expect(steps.contains(pace < 1 ? "statistics" : "indexes") && !steps.contains(pace < 1 ? "indexes" : "statistics"), "\(steps)")
        let c = try db.connect()
        defer { c.close() }
        #expect(try c.query("SELECT count(*) AS n FROM pg_stats WHERE schemaname = 'ledger' AND tablename = 'orders'").int64(0, "n") > 0,
                "the new table was analyzed")
    }

    @Test("an interrupted rebuild's leftover tables are dropped by the next, which then succeeds; the live tables were untouched meanwhile")
    func leftoversAreCleared() throws {
        let db = try TestDatabase.create("rebuildleft")
        defer { LedgerFixture.drop(db) }
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("LO-1")
        let c = try db.connect()
        defer { c.close() }
        let before = try TamperedLogTests.readModels(c)
        // What a rebuild that died after its first commit leaves: the new tables, partly filled.
        try c.transaction { t in
            try ShadowTables().create(on: t)
            try t.query("INSERT INTO ledger.orders_next SELECT * FROM ledger.orders")
            try t.query("UPDATE ledger.orders_next SET status_name = 'forged'")
        }
        try c.transaction { try ShadowTables().createIndexes(on: $0) }
        try c.query("CREATE TABLE ledger.enrollments_old (LIKE ledger.enrollments)")   // as a swap retires it
        #expect(try Self.shadows(c) > 0)
        #expect(try TamperedLogTests.readModels(c) == before, "the live tables are untouched")
        let run = CLIRun()
        #expect(run(["rebuild"], env: ["DATABASE_URL": db.url]) == 0, "\(run.errorLines)")
        #expect(run.output.last?.hasPrefix("rebuilt the read models from 2 events") == true, "\(run.output)")
        #expect(try Self.shadows(c) == 0)
        #expect(try c.query("SELECT status_name FROM ledger.orders WHERE merchant_order_no = 'LO-1'").string(0, "status_name") != "forged")
        #expect(try LedgerFixture.verify(databaseURL: db.url) == [])
    }

    @Test("while the new tables fill, the rebuild holds no lock on the live read models: an ALTER TABLE waiting on one would hold up every write")
    func fillHoldsNoLockOnTheLiveTables() throws {
        let db = try TestDatabase.create("rebuildlocks")
        defer { LedgerFixture.drop(db) }
        try TestWrites(pool: db.pool(size: 1)).registrations(4_000)
        let watcher = try db.connect()
        defer { watcher.close() }
        let done = Locked(false)
        let failure = Locked<String?>(nil)
        let thread = Thread {
            do { _ = try Self.rebuild(db.url) { $0.pace = 0.1 } } catch { failure.with { $0 = "\(error)" } }
            done.with { $0 = true }
        }
        thread.start()
        // Sampled until the rebuild ends: whether another session holds a live table ACCESS
        // SHARE. Making the new tables LIKE the live ones takes that lock until commit; the
        // steps that do it (and the catalog reads) are short, the fill is most of the rebuild.
        var samples = 0, shared = 0
        while !done.with({ $0 }) {
            let locks = try watcher.query("""
                SELECT count(*) AS n FROM pg_locks l
                 WHERE l.pid <> pg_backend_pid() AND l.granted AND l.mode = 'AccessShareLock'
                   AND l.relation IN ('ledger.orders'::regclass, 'ledger.enrollments'::regclass)
                """)
            samples += 1
            if try locks.int64(0, "n") > 0 { shared += 1 }
            Thread.sleep(forTimeInterval: 0.005)
        }
        #expect(failure.with { $0 } == nil, "\(String(describing: failure.with { $0 }))")
        #expect(samples > 50, "the rebuild was watched: \(samples) samples")
        #expect(shared * 10 < samples, "the live tables were held ACCESS SHARE in \(shared) of \(samples) samples")
    }

    @Test("a broken chain stops the rebuild naming the position; the live read models are unchanged and its new tables are gone")
    func brokenChainLeavesNoShadows() throws {
        let db = try TestDatabase.create("rebuildbroken")
        defer { LedgerFixture.drop(db) }
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("BR-1")
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("BR-2")
        let c = try db.connect()
        defer { c.close() }
        let before = try TamperedLogTests.readModels(c)
        try TamperedLogTests.tamper(c, position: 3, path: "{amount}", value: "\"9.00\"", rehash: true)
        #expect {
            try Self.rebuild(db.url)
        } throws: { error in
            "\(error)".contains("hash chain broken at position 4") && "\(error)".contains("nothing was rebuilt")
        }
        #expect(try TamperedLogTests.readModels(c) == before)
        #expect(try Self.shadows(c) == 0)
    }

    @Test("the chain's walk continues from a verified head and names the first position that breaks it")
    func chainContinuation() throws {
        let db = try TestDatabase.create("rebuildwalk")
        defer { LedgerFixture.drop(db) }
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("CW-1")
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("CW-2")
        let c = try db.connect()
        defer { c.close() }
        let events = try EventStore().read(after: 0, limit: 10, on: c)
        var walk = ChainContinuation.genesis
        for event in events.prefix(2) { #expect(walk.check(event) == .intact(events: 1, head: event.position)) }
        #expect(walk.head == 2)
        var skipping = walk
        if case .broken(let position, _) = skipping.check(events[3]) { #expect(position == 3) } else { Issue.record("a gap is a break") }
        #expect(skipping == walk, "a refused event leaves the walk where it was")
        var forged = events[2]
        forged.payloadJSON = forged.payloadJSON.replacingOccurrences(of: "40.00", with: "41.00")
        if case .broken(let position, _) = walk.check(forged) { #expect(position == 3) } else { Issue.record("an edit is a break") }
        #expect(walk.check(events[2]) == .intact(events: 1, head: 3))
    }

    @Test("a second rebuild while one runs is refused at once, and the first is unaffected")
    func oneAtATime() throws {
        let db = try TestDatabase.create("rebuildone")
        defer { LedgerFixture.drop(db) }
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("OT-1")
        let holder = try db.connect()
        defer { holder.close() }
        _ = try holder.query("SELECT pg_advisory_lock($1)", [.int(Rebuild.rebuildLockKey)])
        #expect { try Self.rebuild(db.url) } throws: { "\($0)".contains("another ledger rebuild is running") }
        _ = try holder.query("SELECT pg_advisory_unlock($1)", [.int(Rebuild.rebuildLockKey)])
        #expect(try Self.rebuild(db.url).events == 2)
    }

    @Test("a reader that holds ledger.orders past the rebuild's patience: the swap gives up naming it, writers were never held long, and nothing changed")
    func swapGivesUpOnALongReader() throws {
        let db = try TestDatabase.create("rebuildpatience")
        defer { LedgerFixture.drop(db) }
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("PA-1")
        let reader = try db.connect()
        defer { reader.close() }
        try reader.beginSpanningTransaction()
        _ = try reader.query("SELECT count(*) FROM ledger.orders")   // holds ACCESS SHARE until it ends
        let writes = Mutex<[Double]>([])
        let stop = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        Thread {
            defer { done.signal() }
            var n = 0
            while !stop.load(ordering: .relaxed) {
                let began = Date()
                try? TestWrites(pool: db.pool(size: 1)).registerAndPay("PW-\(n)")
                writes.withLock { $0.append(Date().timeIntervalSince(began)) }
                n += 1
            }
        }.start()
        #expect {
            try Self.rebuild(db.url) { $0.schedule.patienceSeconds = 3 }
        } throws: { error in
            "\(error)".contains("could not swap") && "\(error)".contains("SELECT count(*) FROM ledger.orders")
        }
        stop.store(true, ordering: .relaxed)
        done.wait()
        try reader.endSpanningTransaction()
        let c = try db.connect()
        defer { c.close() }
        #expect(try Self.shadows(c) == 0)
        #expect(try c.query("SELECT count(*) AS n FROM ledger.orders WHERE merchant_order_no = 'PA-1'").int64(0, "n") == 1)
        let slowest = writes.withLock { $0.max() ?? 0 }
        // Each attempt holds writers at most twice its lock timeout: writes go on between attempts,
        // never held for the rebuild's whole patience.
        #expect(slowest < 1.5, "writes went on between attempts; the slowest pair took \(slowest) s")
        #expect(writes.withLock { $0.count } >= 3)
    }

    @Test("a view on a read model stops the rebuild before it starts, naming the view: the swap would drop it")
    func refusesUnknownDependents() throws {
        let db = try TestDatabase.create("rebuilddeps")
        defer { LedgerFixture.drop(db) }
        try TestWrites(pool: db.pool(size: 1)).registerAndPay("DP-1")
        let c = try db.connect()
        defer { c.close() }
        try c.query("CREATE VIEW ledger.paid_orders AS SELECT merchant_order_no FROM ledger.orders WHERE paid")
        let run = CLIRun()
        #expect(run(["rebuild"], env: ["DATABASE_URL": db.url]) == 1)
        #expect(run.errorLines.first?.contains("view ledger.paid_orders") == true, "\(run.errorLines)")
        #expect(run.errorLines.first?.contains("nothing was rebuilt") == true, "\(run.errorLines)")
        #expect(try Self.shadows(c) == 0)
        #expect(try c.query("SELECT count(*) AS n FROM ledger.paid_orders").int64(0, "n") == 1)
    }

    @Test("the rebuild's window sets aside the orders that fall out of it awaiting payment, folds their payments into them, and writes each row once")
    func smallWindow() throws {
        let db = try TestDatabase.create("rebuildwindow")
        defer { LedgerFixture.drop(db) }
        for n in 0..<5 { try TestWrites(pool: db.pool(size: 1)).registerAndPay("WN-\(n)") }
        try TestWrites(pool: db.pool(size: 1)).enrollment("WE-1")
        let c = try db.connect()
        defer { c.close() }
        let projection = ShadowProjection(generation: 1, pageSize: 1, freeze: false)
        // Every order's registration first, then every payment: each order falls out in between.
        try Self.fillShadows(projection, on: c)
        #expect(projection.copiedRows == 5)
        #expect(projection.upsertedRows == 0)
        #expect(projection.setAside.read >= 4, "payments folded into states set aside: \(projection.setAside)")
        let differ = try c.query("""
            SELECT count(*) AS n FROM ledger.orders o FULL JOIN ledger.orders_next n USING (merchant_order_no)
             WHERE o.state IS DISTINCT FROM n.state OR o.paid_recorded_at IS DISTINCT FROM n.paid_recorded_at
            """).int64(0, "n")
        #expect(differ == 0)
        #expect(try c.query("SELECT count(*) AS n FROM ledger.enrollments_next").int64(0, "n") == 1)
        try ShadowTables().dropLeftovers(on: c)
    }

    @Test("orders that come back to the window are set aside and read back, and every row is written at most twice: the rows the live projection wrote")
    func interleavedWindow() throws {
        let db = try TestDatabase.create("rebuildaside")
        defer { LedgerFixture.drop(db) }
        let orders = 60
        for n in 0..<orders {
            try TestWrites(pool: db.pool(size: 1)).registerAndPay("WA-\(n)")
            try TestWrites(pool: db.pool(size: 1)).clientSignal("WA-\(n)")
        }
        let c = try db.connect()
        defer { c.close() }
        let projection = ShadowProjection(generation: 8, pageSize: 4, freeze: false)
        try c.transaction { t in
            try ShadowTables().create(on: t)
            // Every order's first event, then every order's second, then every third: each
            // order comes back twice, long after it fell out of the window.
            let events = try EventStore().read(after: 0, limit: 10_000, on: t)
                .sorted { ($0.streamVersion, $0.position) < ($1.streamVersion, $1.position) }
            #expect(events.count == orders * 3)
            for event in events {
                try projection.add(ShadowProjection.Item(event, try EventMapping.recorded(event)), on: t)
            }
            try projection.flush(on: t)
        }
        #expect(projection.setAside.read > orders / 2, "states read back from the file: \(projection.setAside)")
        #expect(projection.copiedRows == orders)
        #expect(projection.upsertedRows <= orders, "a row upserted once at most, not at each return")
        let differ = try c.query("""
            SELECT count(*) AS n FROM ledger.orders o FULL JOIN ledger.orders_next n USING (merchant_order_no)
             WHERE o.state IS DISTINCT FROM n.state OR o.paid_recorded_at IS DISTINCT FROM n.paid_recorded_at
                OR o.document IS DISTINCT FROM n.document OR o.last_position IS DISTINCT FROM n.last_position
            """).int64(0, "n")
        #expect(differ == 0)
        #expect(try c.query("SELECT count(*) AS n FROM ledger.orders_next").int64(0, "n") == Int64(orders))
        try ShadowTables().dropLeftovers(on: c)
    }

    @Test("the whole rebuild of a ledger whose orders interleave further apart than its pages, with a window of a few orders, at full pace and paced: the states set aside come back, and the read models equal the live ones",
          arguments: [1.0, 0.5])
    func interleavedRebuild(pace: Double) throws {
        let db = try TestDatabase.create("rebuildinterleaved")
        defer { LedgerFixture.drop(db) }
        let count = 2_500   // more orders than a page of the rebuild's (2,000 events)
        try TestWrites(pool: db.pool(size: 1)).registrations(count)
        let orders = (0..<count).map { "P-" + String($0 + 100_000).dropFirst() }
        let pool = db.pool(size: 1)
        let committer = GroupCommitter(pool: pool, projector: OrderProjection())
        for status in [2, 3] {   // every order confirming, then every order paid
            for chunk in stride(from: 0, to: count, by: 500) {
                _ = try committer.append(try orders[chunk..<(chunk + 500)].enumerated().map { n, no in
                    try OrderStateCacheTests.webhook(no, status: status, seq: status * count + chunk + n)
                })
            }
        }
        committer.shutdown()
        pool.close()
        let c = try db.connect()
        defer { c.close() }
        let live = try c.query("SELECT merchant_order_no, state, paid_recorded_at, document FROM ledger.orders ORDER BY 1").rows
        #expect(live.count == count)
        let outcome = try Self.rebuild(db.url) { $0.generation = 4; $0.pace = pace }
        #expect(outcome.events == Int64(3 * count))
        let rebuilt = try c.query("SELECT merchant_order_no, state, paid_recorded_at, document FROM ledger.orders ORDER BY 1").rows
        #expect(rebuilt == live)
        #expect(try LedgerFixture.verify(databaseURL: db.url) == [])
    }

    @Test("an order first named by an event in another order's stream: the catch-up after the build looks its row up rather than copying a second one")
    func foreignStreamCatchUp() throws {
        let db = try TestDatabase.create("rebuildforeign")
        defer { LedgerFixture.drop(db) }
        let c = try db.connect()
        defer { c.close() }
        // Order FO-1's status, written by someone with the database's keys into FO-2's stream.
        let receipt = Receipt(requestID: "test", verifiedBy: "token:test")
        let observation = try QueryObservation.map(provider: "acme", merchantOrderNo: MerchantOrderNo("FO-1"),
                                                   response: .object([("status", .number("1"))]),
                                                   observedAt: nil, receivedAt: Timestamp.now())
        var foreign = EventMapping.newEvent(observation, raw: nil, receipt: receipt)
        foreign.stream = "order-FO-2"
        _ = try c.transaction { try EventStore().append([foreign], on: $0) }
        // The build folds it: FO-1 gets a row.
        let build = ShadowProjection(generation: 8, pageSize: 4)
        try Self.fillShadows(build, firstEventsFirst: false, on: c)
        #expect(build.sawForeignStream)
        // FO-1's own first event arrives during the catch-up.
        let registration = try OrderRequests.registration(
            body: Array(#"{"merchantOrderNo":"FO-1","provider":"web3","amount":"40.00","asset":"USDT"}"#.utf8), receivedAt: Timestamp.now())
        let own = EventMapping.newEvent(.registered(registration), raw: nil, receipt: receipt)
        _ = try c.transaction { try EventStore().append([own], on: $0) }
        let catchUp = ShadowProjection(generation: 8, pageSize: 4, sawForeignStream: build.sawForeignStream)
        try c.transaction { t in
            for event in try EventStore().read(after: 1, limit: 10, on: t) {
                #expect(event.streamVersion == 1)
                try catchUp.add(ShadowProjection.Item(event, try EventMapping.recorded(event)), on: t)
            }
            try catchUp.flush(on: t)
        }
        #expect(catchUp.upsertedRows == 1 && catchUp.copiedRows == 0, "FO-1's row was looked up and upserted")
        let state = try #require(try OrderReadModel(table: ShadowTables.shadow("orders")).loadMany([try MerchantOrderNo("FO-1")], on: c)["FO-1"])
        #expect(state.0.eventCount == 2)
        try ShadowTables().dropLeftovers(on: c)
    }

    @Test("an enrollment's event that arrives while the rebuild builds is folded onto the enrollment's earlier events, not into a state begun anew")
    func enrollmentCaughtUp() throws {
        let ledger = try LedgerFixture.start("rebuildenrol")
        defer { ledger.stop() }
        @Sendable func callback(_ n: Int) -> String {
            #"{"provider":"bankpay","callback":"onSuccess","payload":{"type":"bankAccountAdded","data":{"intent_id":"in_\#(n)"}},"clientEventId":"7b7c2a4e-3f1d-4c8a-9e2b-5d6f7a8b9c0\#(n)"}"#
        }
        for n in 1...2 {
            #expect(try ledger.client.post("/v1/enrollments/ENR-RB/client-events", token: ledger.ingest, json: callback(n)).status == 201)
        }
        let url = ledger.databaseURL
        let outcome = try Self.rebuild(url) { rebuild in
            rebuild.afterBuild = {
                let c = try PostgresConnection(connectionString: url)
                defer { c.close() }
                let signal = try ClientEventRequest.parseEnrollment(enrollmentRef: "ENR-RB", body: Array(callback(3).utf8), receivedAt: .now())
                let event = EventMapping.newEvent(.enrollment(signal), raw: nil, receipt: Receipt(requestID: "test", verifiedBy: "token:test"))
                _ = try c.transaction { try EventStore().append([event], on: $0) }
            }
        }
        #expect(outcome.caughtUp == 1, "the third event came while the rebuild ran")
        let c = try ledger.connect()
        defer { c.close() }
        let row = try c.query("SELECT last_position, state FROM ledger.enrollments WHERE enrollment_ref = 'ENR-RB'")
        #expect(try row.int64(0, "last_position") == 3)
        let report = try Verification().run(on: c)
        #expect(report.summary.total == 0, "the enrollment's row is the fold of all three events")
    }

    @Test("a rebuild whose connection is remade midway (so its one-at-a-time lock is gone) stops before the next step, swaps nothing, and says to run it again")
    func lockLostMidway() throws {
        let ledger = try LedgerFixture.start("rebuildlocklost")
        defer { ledger.stop() }
        #expect(try ledger.sendWeb3(LedgerFixture.web3Body("LL-1", status: 3)).status == 200)
        let c = try ledger.connect()
        defer { c.close() }
        let before = try c.query("SELECT merchant_order_no, state, document FROM ledger.orders ORDER BY 1").rows
        let url = ledger.databaseURL
        let error = #expect(throws: MaintenanceError.self) {
            _ = try Self.rebuild(url) { rebuild in
                rebuild.afterBuild = {
                    // The session holding the rebuild's lock is ended, as a dropped connection would be.
                    let admin = try PostgresConnection(connectionString: url)
                    defer { admin.close() }
                    let ended = try admin.query("""
                        SELECT pg_terminate_backend(pid) AS ended FROM pg_locks
                         WHERE locktype = 'advisory' AND objsubid = 1 AND granted
                           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                           AND ((classid::bigint << 32) | objid::bigint) = $1
                        """, [.int(Rebuild.rebuildLockKey)])
                    #expect(ended.count == 1, "the rebuild's lock was held by one session")
                    Thread.sleep(forTimeInterval: 0.2)
                }
            }
        }
        if case .rebuildLockLost? = error {} else { Issue.record("stopped for another reason: \(String(describing: error))") }
        #expect(try c.query("SELECT merchant_order_no, state, document FROM ledger.orders ORDER BY 1").rows == before)
        #expect(try c.query("""
            SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """).int64(0, "n") == 0)
        // The next rebuild takes the lock, drops the new tables left behind, and completes.
        #expect(try Self.rebuild(url).events == (try c.query("SELECT max(position) AS head FROM ledger.events").int64(0, "head")))
        #expect(try Self.shadows(c) == 0)
    }

    @Test("a paced rebuild sends its rows in pieces and its upserts in short statements, and builds exactly the rows an unpaced one does")
    func pacedWindow() throws {
        let db = try TestDatabase.create("rebuildpaced")
        defer { LedgerFixture.drop(db) }
        for n in 0..<200 { try TestWrites(pool: db.pool(size: 1)).registerAndPay("WP-\(n)") }
        for n in 0..<100 { try TestWrites(pool: db.pool(size: 1)).clientSignal("WP-\(n)") }
        let c = try db.connect()
        defer { c.close() }
        let live = try c.query("SELECT merchant_order_no, state, paid_recorded_at FROM ledger.orders ORDER BY 1").rows
        // In ledger order: each order registered and paid, then a late event for the first
        // 100. The window (100 orders a generation) writes the first 100 rows, paid, by COPY
        // (over 100 KB, sent in pieces); their late events load them back and upsert them;
        // the other 100, dropped once orders came back, are set aside and copied at the end.
        let duty = DutyCycle(share: 0.5)
        let projection = ShadowProjection(generation: 100, pageSize: 25, freeze: false, duty: duty)
        try Self.fillShadows(projection, firstEventsFirst: false, on: c)
        #expect(duty.pauses > 0, "the fold, the rendering and the writes went through the paced path")
        #expect(projection.copiedRows == 200)
        #expect(projection.upsertedRows == 100, "each late event folded into a row written earlier")
        #expect(projection.setAside.written == 100)
        let differ = try c.query("""
            SELECT count(*) AS n FROM ledger.orders o FULL JOIN ledger.orders_next n USING (merchant_order_no)
             WHERE o.state IS DISTINCT FROM n.state OR o.paid_recorded_at IS DISTINCT FROM n.paid_recorded_at
                OR o.document IS DISTINCT FROM n.document OR o.document_masked IS DISTINCT FROM n.document_masked
            """).int64(0, "n")
        #expect(differ == 0)
        try ShadowTables().dropLeftovers(on: c)

        // The whole command, paced, swaps in the same rows.
        let outcome = try Self.rebuild(db.url) { $0.pace = 0.5 }
        #expect(outcome.events == 500)
        let rebuilt = try c.query("SELECT merchant_order_no, state, paid_recorded_at FROM ledger.orders ORDER BY 1").rows
        #expect(rebuilt == live)
    }

    @Test("the schedule catches up until a round is short, and backs off between refused swaps until its patience runs out")
    func schedule() {
        let s = RebuildSchedule()
        #expect(s.afterCatchUp(round: 1, events: s.tailForSwap + 1) == .catchUpAgain)
        #expect(s.afterCatchUp(round: 1, events: s.tailForSwap) == .trySwap)
        #expect(s.afterCatchUp(round: s.maxRounds, events: 1_000_000) == .trySwap)
        #expect(s.afterRefusedSwap(attempt: 1, elapsed: 0) == .after(seconds: s.firstPause))
        #expect(s.afterRefusedSwap(attempt: 2, elapsed: 1) == .after(seconds: s.firstPause * 2))
        #expect(s.afterRefusedSwap(attempt: 30, elapsed: 10) == .after(seconds: s.maxPause))
        #expect(s.afterRefusedSwap(attempt: 3, elapsed: s.patienceSeconds) == .giveUp)
    }
}
