/// Empties the read models for a rebuild, in the caller's transaction, holding the
/// append lock so no write interleaves until it commits.
package struct ReadModelReset: Sendable {
    package init() {}

    package func clearHoldingAppendLock(on c: PostgresConnection) throws {
        try c.query("SELECT pg_advisory_xact_lock($1)", [.int(AppendLock.key)])   // writers wait
        try c.query("DELETE FROM ledger.orders")
        try c.query("DELETE FROM ledger.enrollments")
    }
}
