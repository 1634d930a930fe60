/// The ledger's append lock: one transaction-scoped PostgreSQL advisory lock that
/// every append holds from its start to its commit, so positions and the hash chain
/// are assigned by one writer at a time. The SQL functions read the same key from
/// `ledger.append_lock_key()` (SchemaDocumentTests checks that the two agree).
public enum AppendLock {
    /// The advisory lock's key (`pg_advisory_xact_lock(key)`).
    public static let key: Int64 = 7413001
}
