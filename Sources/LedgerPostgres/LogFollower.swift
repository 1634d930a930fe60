/// Follows the log in position order from a named checkpoint. Because appends
/// are serialized (see Migrations/006_append_events.sql), a transaction commits
/// only after every lower position did, so reading `position > checkpoint`
/// never skips an event that committed late.
public struct LogFollower: Sendable {
    public let name: String
    public let batchSize: Int
    private let store = EventStore()

    public init(name: String, batchSize: Int = 1000) {
        self.name = name
        self.batchSize = batchSize
    }

    public func checkpoint(on connection: PostgresConnection) throws -> Int64 {
        let result = try connection.query("SELECT position FROM ledger.checkpoints WHERE name = $1", [.text(name)])
        return result.count == 0 ? 0 : try result.int64(0, "position")
    }

    /// Reads the next batch after the checkpoint, hands it to `handle`, and
    /// advances the checkpoint in the same transaction. Returns how many events
    /// it handled (0 when caught up).
    @discardableResult
    public func poll(on connection: PostgresConnection, _ handle: ([StoredEvent], PostgresConnection) throws -> Void) throws -> Int {
        try connection.transaction { tx in
            let from = try checkpoint(on: tx)
            let events = try store.read(after: from, limit: batchSize, on: tx)
            guard let last = events.last else { return 0 }
            try handle(events, tx)
            try tx.query("""
                INSERT INTO ledger.checkpoints (name, position, updated_at) VALUES ($1, $2, now())
                ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at
                """, [.text(name), .int(last.position)])
            return events.count
        }
    }
}
