import Dispatch
import LedgerCore

/// The writer's own append: one round trip (ledger.append_prepare) takes the
/// append lock and answers the chain head, the stored events with the batch's
/// keys and each stream's version; the events are then classified, numbered
/// and hashed here, and the new ones sent with one binary COPY. The contract is
/// ledger.append_events' (Migrations/006 and 012), which stays the reference.
///
/// Why: PostgreSQL spent most of an append parsing one large jsonb batch,
/// pulling it apart and rendering each payload again to hash it. Here it only
/// parses each payload once, as it stores it.
///
/// The round trip skipped: when the probe hints leave nothing to probe (every
/// key unknown to the writer, every stream's version known or taken for 0) and
/// the writer knows the head from its own last commit, it skips
/// ledger.append_prepare. The COPY goes out at once, in one simple query after
/// BEGIN and the append lock; the rows chain to the known head, and are dated by
/// PostgreSQL's clock as last read (less than a second ago) advanced by the
/// writer's monotonic clock, never before the head (`StreamVersionCache.
/// recordingTime`). Should anyone else have appended since, their events hold the
/// positions this batch takes: the position's unique index refuses the COPY, and
/// the batch is retried with the round trip (`HeadMoved`; the probe hints stay trusted).
struct ChainAppend {
    /// `whileStoring` gets the outcomes (redelivery counts not yet filled in) as soon as
    /// they are known, while PostgreSQL is still storing the new events: the caller's
    /// pure work on them (a projection's rendering) then costs the writer no time.
    /// It is not called when nothing new is stored.
    ///
    /// `hints`: when given and the batch may be optimistic (`ProbeHints`), keys and
    /// streams the writer never sent are not probed: taken for new, and at version 0.
    /// Should one exist after all, the COPY's unique violation comes out as
    /// `ProbeHintMiss` (the transaction must then be rolled back and the batch tried again).
    ///
    /// The decisions are pure steps (`Probes`, `Start`, `Plan`, `linkHash`); this carries
    /// them out: the round trip, the COPY, the redelivery counts.
    static func append(_ items: [PreparedEvent], on connection: PostgresConnection,
                       cache: StreamVersionCache? = nil, hints: ProbeHints? = nil,
                       whileStoring: (([AppendOutcome]) throws -> Void)? = nil) throws -> [AppendOutcome] {
        let probes = Probes(items, optimistic: hints?.beginBatch() ?? false, hints: hints, cache: cache)
        if let hints { for item in items { hints.remember(key: item.keyFingerprint, stream: item.streamFingerprint) } }
        // The round trip skipped: nothing to probe, and the head known from the writer's
        // last commit (see "the round trip skipped" above `ChainAppend`).
        let skipped = probes.asksNothing && (hints?.roundTripAllowed ?? false) ? cache?.recordingTime() : nil
        var start: Start
        if let skipped {
            start = Start(skipped: skipped, probes: probes)
        } else {
            start = try prepare(probes, cache: cache, on: connection)
        }
        let plan = try Plan(items, stored: start.stored, head: start.headPosition, versions: &start.versions)
        if start.skippedRoundTrip && plan.newCount == 0 {
            // Nothing to COPY, so nothing takes the lock or meets the indexes: outcomes the
            // writer's memory alone decided (version conflicts) are checked with the round trip.
            return try append(items, on: connection, cache: cache, hints: nil, whileStoring: whileStoring)
        }
        let recordedAt = Timestamp(microseconds: start.recordedMicros)
        var headHash = start.headHash
        var hashes: [Int: [UInt8]] = [:]
        hashes.reserveCapacity(plan.newCount)
        var early: [AppendOutcome]?   // the outcomes, if whileStoring asked for them
        if plan.newCount > 0 {
            // Hash the new events in order and stream their rows to PostgreSQL as they
            // are built, so it stores the first while the next are hashed.
            let recordedMicros = start.recordedMicros
            var hashInput = [UInt8]()
            hashInput.reserveCapacity(4096)
            let copied: Int
            do {
                copied = try connection.copyIn(Self.copySQL, precededBy: start.skippedRoundTrip ? Self.appendLockSQL : nil,
                    checkLeadingRow: !start.skippedRoundTrip ? nil : { row in
                        guard let text = row.last ?? nil, let now = Int64(text) else {
                            throw PostgresError.unexpectedResult("the append lock's statement did not answer the time")
                        }
                        guard recordedMicros <= now, now - recordedMicros <= Self.recordingLagLimitMicros else {
                            throw SkippedRoundTripRefused(recordedMicros: recordedMicros, postgresMicros: now)
                        }
                    }) { send in
                    var chunk = CopyBinary.header()
                    chunk.reserveCapacity(Self.chunkBytes + 4096)
                    for (index, item) in plan.items.enumerated() {
                        guard case .new(let position, let version) = item, let parts = items[index].chain else { continue }
                        let hash = linkHash(previous: headHash, position: position, version: version, parts: parts,
                                            recordedMicros: recordedMicros, scratch: &hashInput)
                        hashes[index] = hash
                        headHash = hash
                        CopyBinary.appendRow(&chunk, position: position, parts: parts, version: version,
                                             recordedMicros: recordedMicros, hash: hash)
                        if chunk.count >= Self.chunkBytes {
                            try send(chunk)
                            chunk.removeAll(keepingCapacity: true)
                        }
                    }
                    CopyBinary.appendTrailer(&chunk)
                    try send(chunk)
                } afterSending: {
                    guard let whileStoring else { return }
                    let known = plan.outcomes(items, hashes: hashes, recordedAt: recordedAt)
                    early = known
                    try whileStoring(known)
                }
            } catch let error as PostgresError where (start.skippedRoundTrip || probes.guessesAnything) && error.sqlState == "23505" {
                // A batch chained to a head that moved meets the position's index on its first
                // row. PostgreSQL checks a row's unique indexes in the order of their OIDs, and
                // the position's comes first as the migrations build the table; should it not
                // (a REINDEX CONCURRENTLY, a dump and restore), a row that also repeats a key
                // or stream is reported on that one, and the batch counts as a miss: slower
                // (the probe cooldown), never wrong.
                if start.skippedRoundTrip && error.constraint == Self.positionConstraint {
                    hints?.headMoved()
                    throw HeadMoved(cause: error)
                }
                hints?.missed()
                throw ProbeHintMiss(cause: error)
            }
            guard copied == plan.newCount else {
                throw PostgresError.unexpectedResult("COPY stored \(copied) events of \(plan.newCount)")
            }
        }

        var outcomes = early ?? plan.outcomes(items, hashes: hashes, recordedAt: recordedAt)
        let duplicates = Plan.duplicates(in: outcomes)
        cache?.pending = StreamVersionCache.Pending(head: plan.head, versions: start.versions, headHash: headHash,
                                                    recordedMicros: start.recordedMicros, clockBase: start.clockBase,
                                                    replacesVersions: start.replacesVersions)
        if !duplicates.isEmpty {
            let totals = try countRedeliveries(duplicates.map(\.position), at: start.recordedMicros, on: connection)
            Plan.fill(&outcomes, redeliveries: totals, of: duplicates)
        }
        return outcomes
    }

    /// ledger.append_prepare's round trip: takes the append lock, and answers the chain
    /// head, the stored events with the batch's keys and the versions of its streams.
    private static func prepare(_ probes: Probes, cache: StreamVersionCache?,
                                on connection: PostgresConnection) throws -> Start {
        let cachedHead = cache?.committedHead
        // The arrays travel in binary (`BinaryArray`): PostgreSQL does not parse a text[] literal.
        let answer = cache == nil
            ? try connection.query(Self.prepareSQL, [textArray(probes.keys), textArray(probes.streams)], prepared: true)
            : try connection.query(Self.prepareWithCachedSQL,
                                   [textArray(probes.keys), textArray(probes.streams), textArray(Array(probes.cached.keys)),
                                    .int(cachedHead ?? -1)],
                                   prepared: true)   // a function call: nothing to plan badly
        return try Start(answer: answer, answeredAt: DispatchTime.now().uptimeNanoseconds, probes: probes,
                         cachedHead: cachedHead, committedRecordedMicros: cache?.committedRecordedMicros)
    }

    /// Takes the append lock and answers what the batch's plan needs (Migrations/015).
    static let prepareSQL = "SELECT * FROM ledger.append_prepare($1::text[], $2::text[])"

    /// The same, trusting the versions the writer knows of streams it sent when the head
    /// is where its last commit left it (Migrations/018).
    static let prepareWithCachedSQL = "SELECT * FROM ledger.append_prepare($1::text[], $2::text[], $3::text[], $4)"

    /// The new events' rows, in binary (`CopyBinary`).
    static let copySQL = """
        COPY ledger.events (position, event_id, stream, stream_version, type, source, payload, raw,
                            metadata, idempotency_key, recorded_at, observed_at, hash)
        FROM STDIN (FORMAT binary)
        """

    /// The ledger's append lock (ledger.append_prepare and ledger.append_events take it
    /// too: Migrations 006, 015), for a batch that skips append_prepare, and
    /// PostgreSQL's clock once the lock is held.
    static let appendLockSQL = "SELECT pg_advisory_xact_lock(\(AppendLock.key)), ledger.micros(clock_timestamp()) AS now_us"

    /// How far a skipped round trip's recording time may lag PostgreSQL's clock once the
    /// lock is held (a wait for the lock, say `ledger rebuild` holding it): past it, or
    /// ahead of that clock, the batch is retried with the round trip.
    static let recordingLagLimitMicros: Int64 = 250_000

    /// The unique constraint on ledger.events' position (Migrations/002).
    static let positionConstraint = "events_pkey"

    /// How much COPY data is built before it is sent.
    static let chunkBytes = 64 * 1024

    /// Adds one redelivery per entry (a position may repeat) and answers each position's total.
    static let countRedeliveriesSQL = """
        INSERT INTO ledger.redeliveries AS r (position, count, last_seen_at)
        SELECT p.position, count(*), ledger.from_micros($2)
          FROM unnest($1::bigint[]) AS p(position)
         GROUP BY p.position
        ON CONFLICT ON CONSTRAINT redeliveries_pkey
        DO UPDATE SET count = r.count + excluded.count, last_seen_at = excluded.last_seen_at
        RETURNING r.position, r.count
        """

    private static func countRedeliveries(_ positions: [Int64], at micros: Int64,
                                          on connection: PostgresConnection) throws -> [Int64: Int64] {
        let result = try connection.query(Self.countRedeliveriesSQL,
                                          [.text("{" + positions.map(String.init).joined(separator: ",") + "}"), .int(micros)])
        var totals: [Int64: Int64] = [:]
        for row in 0..<result.count { totals[try result.int64(row, "position")] = try result.int64(row, "count") }
        return totals
    }

    /// A text[] parameter in binary form.
    static func textArray(_ values: [String]) -> SQLValue {
        var array = BinaryArray(.text, capacity: values.reduce(0) { $0 + $1.utf8.count + 4 })
        for value in values { array.append(text: value) }
        return array.parameter
    }
}

/// PostgreSQL's binary COPY format for ledger.events' thirteen columns.
enum CopyBinary {
    /// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01 UTC).
    static let postgresEpochMicros: Int64 = 946_684_800_000_000

    static func header() -> [UInt8] {
        var out = Array("PGCOPY\n".utf8) + [0xff, 0x0d, 0x0a, 0x00]
        BinaryField.appendInt32(&out, 0)  // flags
        BinaryField.appendInt32(&out, 0)  // header extension length
        return out
    }

    static func appendRow(_ out: inout [UInt8], position: Int64, parts: PreparedEvent.ChainParts, version: Int,
                          recordedMicros: Int64, hash: [UInt8]) {
        BinaryField.appendInt16(&out, 13)
        BinaryField.appendInt32(&out, 8)
        BinaryField.appendInt64(&out, position)
        out.append(contentsOf: parts.copyHead)                       // event_id, stream
        BinaryField.appendInt32(&out, 4)
        BinaryField.appendInt32(&out, Int32(truncatingIfNeeded: version))
        out.append(contentsOf: parts.copyBody)                       // type ... idempotency_key
        BinaryField.appendInt32(&out, 8)
        BinaryField.appendInt64(&out, recordedMicros - postgresEpochMicros)
        BinaryField.appendInt32(&out, 8)
        BinaryField.appendInt64(&out, parts.observedMicros - postgresEpochMicros)
        BinaryField.appendLengthPrefixed(&out, hash)
    }

    static func appendTrailer(_ out: inout [UInt8]) {
        BinaryField.appendInt16(&out, -1)
    }
}
