import LedgerPostgres

/// `ledger verify`: walks every event checking the hash chain, re-runs the reducer and
/// compares the result with the read models, all in one snapshot.
package struct Verification: Sendable {
    package init() {}

    package struct Report: Sendable {
        package var events: Int64
        package var head: Int64
        /// Each read-model difference, in words (order and field).
        package var differences: [String]
    }

    /// The report of an intact chain; a broken one throws `MaintenanceError.chainBroken`.
    package func run(on connection: PostgresConnection) throws -> Report {
        try connection.readOnlySnapshot { c in
            switch try ChainVerifier().verify(on: c) {
            case .broken(let position, let reason):
                throw MaintenanceError.chainBroken(position: position, reason)
            case .intact(let events, let head):
                return Report(events: events, head: head, differences: try ReadModelCheck().differences(on: c))
            }
        }
    }
}
