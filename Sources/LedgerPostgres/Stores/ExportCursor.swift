/// The session an export reads through: named in pg_stat_activity and bounded in how
/// long it waits for a lock. Its rows come with one COPY (`PeriodEventScan`,
/// `PaidOrderScan`), no longer through a server-side cursor.
package struct ExportCursor: Sendable {
    package init() {}

    /// Names the session and bounds its lock waits (`ledger rebuild` holds the append lock).
    package func prepareSession(lockWaitSeconds: Int, on c: PostgresConnection) throws {
        try c.query("SET application_name = 'ledger export'")
        try c.query("SET lock_timeout = '\(lockWaitSeconds)s'")   // an integer, not input
    }
}
