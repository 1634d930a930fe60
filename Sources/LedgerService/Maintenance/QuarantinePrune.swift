import LedgerCore
import LedgerPostgres

/// `ledger quarantine prune`: deletes the rejected deliveries received before a time,
/// then rewrites the table so its size, which the quarantine's budget measures, shrinks.
package struct QuarantinePrune: Sendable {
    package init() {}

    package struct Outcome: Sendable {
        package var deleted: Int
        package var bytesBefore: Int64
        package var bytesAfter: Int64
    }

    package func run(before: Timestamp, on connection: PostgresConnection) throws -> Outcome {
        let store = QuarantineStore()
        let deleted = try connection.transaction { try store.delete(receivedBefore: before, on: $0) }
        let bytesBefore = try store.sizeBytes(on: connection)
        try store.compact(on: connection)
        return Outcome(deleted: deleted, bytesBefore: bytesBefore, bytesAfter: try store.sizeBytes(on: connection))
    }
}
