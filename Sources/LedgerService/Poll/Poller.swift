import LedgerCore
import LedgerObservability
import LedgerPostgres

/// The ledger's poller (operations.md, providers.md): asks the web3 gateway about
/// every order a poll can still change, and records each answer as a query
/// observation, an event like any other (lifecycle rule 7: a poll that still says
/// 1 is a new event that leaves the state as it was).
///
/// Which orders are due lives in `ledger.polls` (`PollSchedule`): two pollers
/// (`ledger serve` and `ledger poll --once`) never ask about one order at once.
package struct Poller: Sendable {
    package let pool: ConnectionPool
    package let committer: GroupCommitter
    package let gateway: Web3Gateway
    package let logger: Logger

    /// Orders claimed at once. A claim's lease outlasts asking about all of them:
    /// each takes at most the gateway's timeout and a commit's wait.
    package static let claimSize = 5
    package static var leaseSeconds: Int64 {
        Int64(claimSize) * Int64(Web3Gateway.timeoutSeconds + 2 + Ingestion.commitWaitSeconds) + 30
    }

    package struct Summary: Sendable, Equatable {
        package var polled = 0
        package var recorded = 0
        package var failed = 0
    }

    /// Which orders are due: pollable by `PollPolicy`.
    private var schedule: PollSchedule {
        PollSchedule(statuses: OrderStatus.allCases.filter(PollPolicy.wantsPolling).map(\.rawValue),
                     maxAgeSeconds: PollPolicy.maxAgeSeconds, restartDelaySeconds: PollPolicy.delaySeconds(afterAttempts: 1))
    }

    /// One pass: enrols orders updated since `since` (PostgreSQL's clock), then asks about
    /// the orders due when it began until none is left, `limit` have been asked about, or
    /// `stopping`. An order it polled that comes due again meanwhile (its delay shorter than
    /// the pass) waits for the next pass: a pass ends, whatever the gateway's speed.
    /// Returns what it did and PostgreSQL's time when it began, for the next `since`.
    package func pass(since: Timestamp?, limit: Int = PollPolicy.passLimit,
              stopping: () -> Bool = { false }) throws -> (Summary, began: Timestamp) {
        let schedule = self.schedule
        let (startedMicros, dueBy) = try pool.withConnection { c in
            (try schedule.enrol(sinceMicros: since?.microseconds, on: c), try schedule.now(on: c))
        }
        let began = Timestamp(microseconds: startedMicros)
        var summary = Summary()
        while summary.polled < limit, !stopping() {
            let claimed = try claim(min(Self.claimSize, limit - summary.polled), dueBy: dueBy)
            if claimed.isEmpty { break }
            for (index, (no, attempts)) in claimed.enumerated() {
                if stopping() {
                    let rest = claimed[index...].map(\.0.value)
                    try pool.withConnection { try schedule.release(rest, on: $0) }
                    return (summary, began)
                }
                summary.polled += 1
                var failure: String?
                do {
                    if try poll(no) { summary.recorded += 1 }
                } catch {
                    summary.failed += 1
                    failure = gateway.redacted(String(describing: error))
                    logger.warning("a poll of the web3 gateway gave no observation, or it could not be recorded",
                                   [("order", .string(no.value)), ("error", .string(failure ?? ""))])
                }
                let next = PollPolicy.delaySeconds(afterAttempts: attempts + 1)
                try pool.withConnection { c in
                    try schedule.reschedule(no.value, claimedAttempts: attempts, afterSeconds: next, failure: failure, on: c)
                }
            }
        }
        return (summary, began)
    }

    private func claim(_ count: Int, dueBy: Int64) throws -> [(MerchantOrderNo, Int)] {
        let schedule = self.schedule
        let rows = try pool.withConnection { try schedule.claim(count, dueByMicros: dueBy, leaseSeconds: Self.leaseSeconds, on: $0) }
        // An order number the core refuses cannot have been stored; skip it rather than stall.
        return rows.compactMap { row in (try? MerchantOrderNo(stored: row.0)).map { ($0, row.1) } }
    }

    /// Asks about one order and records the answer; true when it was a new event.
    private func poll(_ no: MerchantOrderNo) throws -> Bool {
        let body = try gateway.queryOrder(no)
        let observation = try Web3Query.observation(merchantOrderNo: no, responseBody: body, observedAt: .now())
        let event = LedgerEvent.observed(observation)
        let new = EventMapping.newEvent(event, raw: body, receipt: Receipt(requestID: "poll:" + no.value, verifiedBy: "poller"))
        switch try committer.append([new], attachments: [event], timeout: Ingestion.commitWaitSeconds)[0] {
        case .appended: return true
        case .duplicate: return false
        case .keyConflict, .versionConflict: throw ServiceError.internalError("the poll's event for \(no.value) conflicts with a stored one")
        }
    }
}
