import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing

/// A projector that holds the first batch (so later requests pile up into
/// one batch) and refuses any batch holding the poisoned stream, the way an
/// index refuses an oversized value.
struct GateAndPoisonProjector: BatchProjector {
    func project(_ appended: [Item], prepared: (any Sendable)?,
                 on connection: PostgresConnection) throws {
        if appended.contains(where: { $0.prepared.event.stream == "order-GATE" }) { Thread.sleep(forTimeInterval: 0.4) }
        if appended.contains(where: { $0.prepared.event.stream == "order-POISON" }) {
            throw PostgresError.server(sqlState: "54000", message: "index row size exceeds btree maximum", detail: nil)
        }
    }
}

@Suite("Group commit isolates a bad request")
struct GroupCommitIsolationTests {
    @Test("a request that fails its batch fails alone: the others in the batch are retried and committed")
    func poisonFailsAlone() async throws {
        let db = try TestDatabase.create("isolate")
        let pool = db.pool(size: 2)
        let committer = GroupCommitter(pool: pool, projector: GateAndPoisonProjector())
        defer { committer.shutdown(); pool.close() }

        async let gate = committer.append([sampleEvent(key: "gate", stream: "order-GATE")])
        try await Task.sleep(for: .milliseconds(100))   // the writer is now held in the gate batch
        let results = await withTaskGroup(of: (String, Bool).self) { group in
            for key in ["g1", "g2", "POISON", "g3", "g4"] {
                group.addTask {
                    let stream = key == "POISON" ? "order-POISON" : "order-OK"
                    do { _ = try await committer.append([sampleEvent(key: key, stream: stream)]); return (key, true) }
                    catch { return (key, false) }
                }
            }
            var all: [String: Bool] = [:]
            for await (key, ok) in group { all[key] = ok }
            return all
        }
        _ = try await gate
        #expect(results == ["g1": true, "g2": true, "g3": true, "g4": true, "POISON": false])
        let c = try db.connect()
        let keys = try c.query("SELECT idempotency_key FROM ledger.events ORDER BY position")
        #expect(Set((0..<keys.count).compactMap { try? keys.string($0, "idempotency_key") }) == ["gate", "g1", "g2", "g3", "g4"])
        #expect(try ChainVerifier().verify(on: c) == .intact(events: 5, head: 5))
        #expect(committer.stats.failedBatches >= 2)   // the shared batch, then the poisoned request alone
    }

    @Test("past maxQueuedEvents waiting, a submission is refused at once as unavailable; what was queued commits")
    func backpressure() throws {
        let db = try TestDatabase.create("backpressure")
        let pool = db.pool(size: 2)
        let committer = GroupCommitter(pool: pool, projector: GateAndPoisonProjector(), maxQueuedEvents: 2)
        defer { committer.shutdown(); pool.close() }
        let answers = Mutex<[String: Result<[AppendOutcome], Error>]>([:])
        func submit(_ key: String, _ stream: String = "order-OK") {
            committer.submit([sampleEvent(key: key, stream: stream)]) { result in answers.withLock { $0[key] = result } }
        }
        submit("gate", "order-GATE")
        Thread.sleep(forTimeInterval: 0.1)   // the writer holds the gate batch for 0.4 s
        submit("q1")
        submit("q2")
        submit("refused")
        let refusedAtOnce = answers.withLock { $0["refused"] }
        guard case .failure(let error) = refusedAtOnce else {
            Issue.record("the third queued submission was not refused at once: \(String(describing: refusedAtOnce))")
            return
        }
        #expect((error as? PostgresError)?.isUnavailable == true, "\(error)")
        let started = Date()
        while answers.withLock({ $0.count }) < 4 && Date().timeIntervalSince(started) < 10 { Thread.sleep(forTimeInterval: 0.01) }
        for key in ["gate", "q1", "q2"] {
            guard case .success(let outcomes) = answers.withLock({ $0[key] }), case .appended = outcomes.first else {
                Issue.record("\(key) was not appended")
                continue
            }
        }
        let c = try db.connect()
        #expect(try count("SELECT count(*) AS n FROM ledger.events", on: c) == 3)
    }
}
