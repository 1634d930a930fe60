import LedgerCore
import LedgerPostgres

/// `ledger verify`: walks every event checking the hash chain, re-runs the reducer and
/// compares the result with the read models, all in one snapshot.
package struct Verification: Sendable {
    package init() {}

    package static let progressEvery: Int64 = 10_000

    package struct Report: Sendable {
        package var events: Int64
        package var head: Int64
        /// The read-model differences, counted by field (each was handed to `each` as found).
        package var summary: DifferenceSummary
        /// The stored signatures checked again, when keys were given.
        package var signatures: SignatureRecheck?
        /// The read-model rows compared with a replay: one per order and enrollment stream.
        package var streams: Int64
    }

    /// The report of an intact chain; a broken one throws `MaintenanceError.chainBroken`.
    /// Each read-model difference goes to `each` as it is found (the order or enrollment
    /// and every field that differs), so memory does not grow with them.
    /// With `signatures`, every signed event is checked again as the chain is walked.
    /// `progress` is told how many events have been checked, every `progressEvery`.
    package func run(on connection: PostgresConnection, signatures: SignatureRecheck? = nil,
                     progress: (Int64) -> Void = { _ in }, each: (ReadModelDifference) -> Void = { _ in }) throws -> Report {
        var recheck = signatures
        var walked: Int64 = 0
        return try connection.readOnlySnapshot { c in
            let verdict = try ChainVerifier().verify(on: c) { event in
                try recheck?.check(event)
                walked += 1
                if walked % Self.progressEvery == 0 { progress(walked) }
            }
            switch verdict {
            case .broken(let position, let reason):
                throw MaintenanceError.chainBroken(position: position, reason)
            case .intact(let events, let head):
                var summary = DifferenceSummary()
                try ReadModelCheck().check(on: c) { difference in
                    summary.add(difference)
                    each(difference)
                }
                return Report(events: events, head: head, summary: summary, signatures: recheck,
                              streams: try ReadModelCheck().rowCount(on: c))
            }
        }
    }
}
