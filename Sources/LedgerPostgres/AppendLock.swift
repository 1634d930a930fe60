/// The ledger's append lock: one transaction-scoped PostgreSQL advisory lock that
/// every append holds from its start to its commit, so positions and the hash
/// chain are assigned by one writer at a time (the SQL functions of the
/// migrations take it too, with the same key).
public enum AppendLock {
    /// The advisory lock's key (`pg_advisory_xact_lock(key)`).
    public static let key: Int64 = 7413001
}
