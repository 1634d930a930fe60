import LedgerPostgres

/// What the use cases are configured with: the database, the providers' keys, and the
/// limits of the quarantine and the writer. A plain value; `LedgerAPI`'s
/// `LedgerConfiguration` reads it from the environment, with the rest of the settings.
/// Secrets live here and nowhere near the logger.
public struct ServiceConfiguration: Sendable {
    public var databaseURL: String
    /// Keys that verify web3 webhooks (any of them); the first is the poller's X-Pay-Api-Key.
    public var web3APIKeys: [String] = []
    /// The web3 gateway's order-query API; set, it turns the poller on.
    public var web3APIBase: String?
    public var banxaAPIKey: String?
    public var banxaAPISecrets: [String] = []
    /// How far a signed time may be from now, either way.
    public var signatureToleranceSeconds: Int64 = 300
    /// How large ledger.quarantine may grow (table, indexes and TOAST) before further
    /// rejected deliveries are only counted, not kept.
    public var quarantineMaxBytes: Int64 = 1 << 30
    /// How many rejected deliveries a minute one remote address may have kept (a burst of
    /// that many, then that rate); the rest are only counted.
    public var quarantinePerSourcePerMinute: Int = 600
    /// How many orders' states the writer keeps from its last commits (`OrderStateCache`),
    /// so their next events need no load; 0 turns it off. It pays only when it holds the
    /// orders that are active, and holds at most about 16 MB of them (docs/decisions.md).
    public var orderStateCacheSize: Int = 0
    /// The nice value the single writer thread asks for (`WriterPriority`; 0 leaves it alone).
    public var writerNice: Int = -10
    /// The signing of checkpoints: the key's path, the log's name, the copy folder, the interval.
    public var checkpoints = CheckpointConfiguration()

    public init(databaseURL: String) {
        self.databaseURL = databaseURL
    }

    public var database: DatabaseConfiguration { DatabaseConfiguration(connectionString: databaseURL) }
}
