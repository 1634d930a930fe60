/// The session an export reads through: named in pg_stat_activity, bounded in how long
/// it waits for a lock, and read through one server-side cursor (declared by the event
/// log or the read model for the export's kind).
package struct ExportCursor: Sendable {
    package static let name = "export_rows"

    package init() {}

    /// Names the session and bounds its lock waits (`ledger rebuild` holds the append lock).
    package func prepareSession(lockWaitSeconds: Int, on c: PostgresConnection) throws {
        try c.query("SET application_name = 'ledger export'")
        try c.query("SET lock_timeout = '\(lockWaitSeconds)s'")   // an integer, not input
    }

    /// The cursor is exhausted: closed, so the transaction can end.
    package func close(on c: PostgresConnection) throws {
        try c.query("CLOSE \(Self.name)")
    }
}
