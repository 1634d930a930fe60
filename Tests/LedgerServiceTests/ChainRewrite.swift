import LedgerPostgres

/// What an insider with the database's keys can do to the chain: recompute a stored
/// hash with `ledger.event_hash` from the stored hash before it, so the link holds again.
enum ChainRewrite {
    static func rehash(_ position: Int64, on c: PostgresConnection) throws {
        try c.query("""
            UPDATE ledger.events e SET hash = ledger.event_hash(
                coalesce((SELECT p.hash FROM ledger.events p WHERE p.position = e.position - 1), decode(repeat('00', 32), 'hex')),
                e.position, e.event_id, e.stream, e.stream_version, e.type, e.source, e.payload, e.raw, e.metadata,
                e.idempotency_key, e.recorded_at, e.observed_at)
             WHERE e.position = $1
            """, [.int(position)])
    }
}
