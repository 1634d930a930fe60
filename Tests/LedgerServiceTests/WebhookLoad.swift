import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing

/// Signed web3 webhooks sent by several threads, one request per connection, until
/// stopped: a fault test breaks the server or its database under this load, then asks
/// `expectEveryAcknowledgedStoredOnce` whether every 200 it got is in the ledger once.
final class WebhookLoad: Sendable {
    /// The bodies answered 200: each is unique (a `seq` field), so each must be stored exactly once.
    var acknowledged: [[UInt8]] { state.withLock { $0.acknowledged } }
    /// How many answers of each status; 0 counts requests that got no answer.
    var statuses: [Int: Int] { state.withLock { $0.statuses } }
    /// Answers other than 200 and 503, and requests that got none, in words.
    var unusual: [String] { state.withLock { $0.unusual } }
    /// The longest any one request took, answered or not, in seconds.
    var longestRequest: Double { state.withLock { $0.longestRequest } }
    /// Every request's duration in seconds, with when it began (seconds since the load began).
    var requests: [(began: Double, seconds: Double)] { state.withLock { $0.requests } }

    private struct State {
        var acknowledged: [[UInt8]] = []
        var statuses: [Int: Int] = [:]
        var unusual: [String] = []
        var longestRequest = 0.0
        var requests: [(began: Double, seconds: Double)] = []
    }

    /// When the load began.
    let began = Date()
    private let state = Mutex(State())
    private let stopping = Atomic<Bool>(false)
    private let group = DispatchGroup()

    /// Starts `threads` senders at once. Thread t writes to orders "\(prefix)-t-0" to
    /// "\(prefix)-t-\(orders - 1)", statuses 1, 2, 5, 3, 4 in turn, at most `limit` each.
    init(port: Int, threads: Int, prefix: String, orders: Int, timeout: Double = 20, limit: Int = 5_000,
         pause: UInt32 = 0) {
        let loadBegan = began
        for t in 0..<threads {
            group.enter()
            let thread = Thread { [self] in
                defer { group.leave() }
                let client = HTTPClient(port: port, timeout: timeout)
                var i = 0
                while !stopping.load(ordering: .relaxed) && i < limit {
                    let body = LedgerFixture.web3Body("\(prefix)-\(t)-\(i % orders)", status: [1, 2, 5, 3, 4][i % 5],
                                                      extra: #","seq":"\#(t)-\#(i)""#)
                    i += 1
                    let started = Date()
                    let headers = LedgerFixture.web3Headers(body, timestamp: String(Timestamp.now().seconds))
                    let outcome = Result { try client.post("/v1/webhooks/web3", body: body, headers: headers) }
                    let seconds = Date().timeIntervalSince(started)
                    state.withLock { s in
                        s.longestRequest = max(s.longestRequest, seconds)
                        s.requests.append((started.timeIntervalSince(loadBegan), seconds))
                        switch outcome {
                        case .success(let reply):
                            s.statuses[reply.status, default: 0] += 1
                            if reply.status == 200 { s.acknowledged.append(body) }
                            if reply.status != 200 && reply.status != 503 { s.unusual.append("\(reply)") }
                        case .failure(let error):
                            s.statuses[0, default: 0] += 1
                            s.unusual.append("no answer after \(seconds) s: \(error)")
                        }
                    }
                    // Back off while the service sheds load or is gone, as a provider's retries would.
                    switch outcome {
                    case .success(let reply) where reply.status == 503: usleep(20_000)
                    case .failure: usleep(5_000)
                    default: if pause > 0 { usleep(pause) }
                    }
                }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Waits until at least `count` webhooks are acknowledged, or `seconds` pass.
    @discardableResult
    func waitForAcknowledged(_ count: Int, within seconds: Double) -> Bool {
        eventually(within: seconds, every: 0.01) { acknowledged.count >= count }
    }

    /// Stops every sender and waits for each to finish its request in flight.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        group.wait()
    }
}

/// The durability check after a fault: every acknowledged webhook is stored exactly once,
/// nothing unacknowledged outnumbers them, the hash chain is intact and the read models
/// match a replay (what `ledger verify` checks).
func expectEveryAcknowledgedStoredOnce(_ acknowledged: [[UInt8]], databaseURL: String, after fault: String,
                                       sourceLocation: SourceLocation = #_sourceLocation) throws {
    let c = try PostgresConnection(connectionString: databaseURL)
    defer { c.close() }
    var notOnce = 0
    for body in acknowledged {
        let n = try c.query("SELECT count(*) AS n FROM ledger.events WHERE idempotency_key = $1",
                            [.text(LedgerFixture.web3Key(body))]).int64(0, "n")
        if n != 1 { notOnce += 1 }
    }
    #expect(notOnce == 0, "\(notOnce) of \(acknowledged.count) acknowledged webhooks are not stored exactly once after \(fault)",
            sourceLocation: sourceLocation)
    let total = try c.query("SELECT count(*) AS n FROM ledger.events").int64(0, "n")
    #expect(total >= Int64(acknowledged.count), "\(total) events stored, \(acknowledged.count) acknowledged", sourceLocation: sourceLocation)
    #expect(try ChainVerifier().verify(on: c) == .intact(events: total, head: total), "the chain survives \(fault)",
            sourceLocation: sourceLocation)
    #expect(try LedgerFixture.verify(databaseURL: databaseURL) == [], "read models match a replay after \(fault)",
            sourceLocation: sourceLocation)
}
