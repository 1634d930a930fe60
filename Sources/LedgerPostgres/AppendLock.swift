/// The ledger's single append lock (pg_advisory_xact_lock key); SQL reads it from ledger.append_lock_key().
public enum AppendLock {
    public static let key: Int64 = 7413001
}
