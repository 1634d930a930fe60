import LedgerCore

/// A signed checkpoint as ledger.signed_checkpoints holds it.
public struct StoredCheckpoint: Sendable, Equatable {
    public let position: Int64
    public let hash: [UInt8]
    public let signedAt: Timestamp
    /// The whole note, body and signature line, byte for byte as it was signed.
    public let note: String

    public init(position: Int64, hash: [UInt8], signedAt: Timestamp, note: String) {
        self.position = position
        self.hash = hash
        self.signedAt = signedAt
        self.note = note
    }
}

/// The append-only table of signed notes (Migrations/030_checkpoints.sql).
public struct CheckpointStore: Sendable {
    public init() {}

    /// Stores the note; false when a note for that position is already stored (it is kept).
    @discardableResult
    public func insert(_ checkpoint: Checkpoint, on connection: PostgresConnection) throws -> Bool {
        let result = try connection.query("""
            INSERT INTO ledger.signed_checkpoints (position, hash, signed_at, note)
            VALUES ($1, $2, ledger.from_micros($3), $4)
            ON CONFLICT (position) DO NOTHING
            RETURNING position
            """, [.int(checkpoint.body.position), .bytes(checkpoint.body.hash),
                  .int(checkpoint.body.signedAt.microseconds), .text(checkpoint.note.text)])
        return result.count == 1
    }

    public func newest(on connection: PostgresConnection) throws -> StoredCheckpoint? {
        try Self.rows(connection.query("""
            SELECT position, hash, ledger.micros(signed_at) AS signed_us, note
              FROM ledger.signed_checkpoints ORDER BY position DESC LIMIT 1
            """)).first
    }

    /// The notes before `position` (all of them with nil), newest first.
    public func newestFirst(before position: Int64?, limit: Int, on connection: PostgresConnection) throws -> [StoredCheckpoint] {
        try Self.rows(connection.query("""
            SELECT position, hash, ledger.micros(signed_at) AS signed_us, note
              FROM ledger.signed_checkpoints WHERE $1::bigint IS NULL OR position < $1
             ORDER BY position DESC LIMIT $2
            """, [position.map { .int($0) } ?? .null, .int(Int64(limit))]))
    }

    /// The notes after `position`, oldest first.
    public func list(after position: Int64, limit: Int, on connection: PostgresConnection) throws -> [StoredCheckpoint] {
        try Self.rows(connection.query("""
            SELECT position, hash, ledger.micros(signed_at) AS signed_us, note
              FROM ledger.signed_checkpoints WHERE position > $1 ORDER BY position LIMIT $2
            """, [.int(position), .int(Int64(limit))]))
    }

    /// The chain's stored hash at each of `positions` (those that exist).
    public func chainHashes(at positions: [Int64], on connection: PostgresConnection) throws -> [Int64: [UInt8]] {
        let result = try connection.query("""
            SELECT position, hash FROM ledger.events WHERE position = ANY($1::bigint[])
            """, [.text("{" + positions.map(String.init).joined(separator: ",") + "}")])
        var out = [Int64: [UInt8]]()
        for r in 0..<result.count { out[try result.int64(r, "position")] = try result.bytes(r, "hash") ?? [] }
        return out
    }

    static func rows(_ result: QueryResult) throws -> [StoredCheckpoint] {
        try (0..<result.count).map { r in
            StoredCheckpoint(position: try result.int64(r, "position"), hash: try result.bytes(r, "hash") ?? [],
                             signedAt: Timestamp(microseconds: try result.int64(r, "signed_us")),
                             note: try result.string(r, "note"))
        }
    }
}
