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
    /// A stored event the batch's keys name.
    private struct Stored {
        var receipt: EventReceipt
        var stream: String
        var type: String
        var payloadText: [UInt8]
    }

    /// `whileStoring` gets the outcomes (redelivery counts not yet filled in) as soon as
    /// they are known, while PostgreSQL is still storing the new events: the caller's
    /// pure work on them (a projection's rendering) then costs the writer no time.
    /// It is not called when nothing new is stored.
    ///
    /// `hints`: when given and the batch may be optimistic (`ProbeHints`), keys and
    /// streams the writer never sent are not probed: taken for new, and at version 0.
    /// Should one exist after all, the COPY's unique violation comes out as
    /// `ProbeHintMiss` (the transaction must then be rolled back and the batch tried again).
    static func append(_ items: [PreparedEvent], on connection: PostgresConnection,
                       cache: StreamVersionCache? = nil, hints: ProbeHints? = nil,
                       whileStoring: (([AppendOutcome]) throws -> Void)? = nil) throws -> [AppendOutcome] {
        var keys = [String]()
        var probed = [String]()        // streams whose version must be asked for
        var cached: [String: Int] = [:] // streams whose version the writer knows, if the head agrees
        var assumedNew: [String: Int] = [:]  // streams taken to be at version 0 without a probe
        var skippedKeys = false
        var seenKeys = Set<String>(minimumCapacity: items.count)
        var seenStreams = Set<String>(minimumCapacity: items.count)
        assumedNew.reserveCapacity(items.count)
        let optimistic = hints?.beginBatch() ?? false
        // A stream an item names with an expected version is always probed: that check needs the truth.
        let checked = optimistic ? Set(items.lazy.filter { $0.event.expectedVersion != nil }.map(\.event.stream)) : []
        for item in items {
            let key = item.event.idempotencyKey, stream = item.event.stream
            if seenKeys.insert(key).inserted {
                if optimistic, let hints, !hints.mayExist(key: item.keyFingerprint) { skippedKeys = true } else { keys.append(key) }
            }
            if seenStreams.insert(stream).inserted {
                if let known = cache?.version(of: stream) {
                    cached[stream] = known
                } else if optimistic, let hints, !hints.mayExist(stream: item.streamFingerprint), !checked.contains(stream) {
                    assumedNew[stream] = 0
                } else {
                    probed.append(stream)
                }
            }
        }
        if let hints { for item in items { hints.remember(key: item.keyFingerprint, stream: item.streamFingerprint) } }
        var mayMiss = skippedKeys || !assumedNew.isEmpty
        var headPosition: Int64 = 0
        var headHash = ChainHash.genesis
        var recordedMicros: Int64
        var stored: [String: Stored] = [:]
        var versions: [String: Int] = assumedNew
        var clockBase: (postgresMicros: Int64, uptimeNanos: UInt64)?
        // The round trip skipped: nothing to probe, and the head known from the writer's
        // last commit (see "the round trip skipped" above `append`).
        let skipped = optimistic && keys.isEmpty && probed.isEmpty && (hints?.roundTripAllowed ?? false)
            ? cache?.recordingTime() : nil
        var replacesVersions = false
        if let skipped {
            (headPosition, headHash, recordedMicros) = skipped
            versions.merge(cached) { assumed, _ in assumed }
            mayMiss = true
        } else {
            let cachedHead = cache?.committedHead
            // The arrays travel in binary (`BinaryArray`): PostgreSQL does not parse a text[] literal.
            let answer = cache == nil
                ? try connection.query("SELECT * FROM ledger.append_prepare($1::text[], $2::text[])",
                                       [textArray(keys), textArray(probed)], prepared: true)
                : try connection.query("SELECT * FROM ledger.append_prepare($1::text[], $2::text[], $3::text[], $4)",
                                       [textArray(keys), textArray(probed), textArray(Array(cached.keys)),
                                        .int(cachedHead ?? -1)],
                                       prepared: true)   // a function call: nothing to plan badly
            let answered = DispatchTime.now().uptimeNanoseconds
            var postgresMicros: Int64?
            for row in 0..<answer.count {
                switch try answer.string(row, "kind") {
                case "head":
                    postgresMicros = try answer.int64(row, "recorded_us")
                    if try answer.value(row, "position") != nil {
                        headPosition = try answer.int64(row, "position")
                        headHash = try answer.bytes(row, "hash") ?? []
                    }
                    // The head is where the writer's last commit left it: what it knows is exact.
                    // Elsewhere, someone else appended: none of its other versions can be trusted.
                    if let cachedHead, cachedHead == headPosition {
                        versions.merge(cached) { probed, _ in probed }
                    } else if cachedHead != nil {
                        replacesVersions = true
                    }
                case "stored":
                    let receipt = EventReceipt(
                        position: try answer.int64(row, "position"), eventID: try answer.string(row, "event_id"),
                        streamVersion: Int(try answer.int64(row, "stream_version")),
                        recordedAt: Timestamp(microseconds: try answer.int64(row, "recorded_us")),
                        hash: try answer.bytes(row, "hash") ?? [])
                    stored[try answer.string(row, "key")] = Stored(
                        receipt: receipt, stream: try answer.string(row, "stream"), type: try answer.string(row, "type"),
                        payloadText: Array(try answer.string(row, "payload").utf8))
                default:
                    versions[try answer.string(row, "stream")] = Int(try answer.int64(row, "stream_version"))
                }
            }
            guard let postgresMicros, headHash.count == 32 else {
                throw PostgresError.unexpectedResult("ledger.append_prepare did not answer the chain head")
            }
            clockBase = (postgresMicros, answered)
            // After a batch dated by the writer (a little behind PostgreSQL's clock), never earlier.
            let previous = cachedHead == headPosition ? cache?.committedRecordedMicros : nil
            recordedMicros = max(postgresMicros, previous ?? postgresMicros)
        }
        guard seenStreams.allSatisfy({ versions[$0] != nil }) else {
            throw PostgresError.unexpectedResult("ledger.append_prepare did not answer every stream's version")
        }
        let recordedAt = Timestamp(microseconds: recordedMicros)

        // First pass: classify every item and number the new ones. A later item
        // with the key of a new one is its redelivery (or conflicts with it).
        var plans = [Plan]()
        plans.reserveCapacity(items.count)
        var fresh: [String: Int] = [:]     // key -> index of the new item that carries it
        fresh.reserveCapacity(items.count)
        var position = headPosition
        for (index, item) in items.enumerated() {
            guard let parts = item.chain else {
                throw PostgresError.unexpectedResult("an event that cannot be rendered reached the writer's append path")
            }
            let e = item.event
            if let existing = stored[e.idempotencyKey] {
                let same = existing.stream == e.stream && existing.type == e.type && existing.payloadText == parts.payloadText
                plans.append(same ? .duplicate(existing.receipt) : .keyConflict(existing.receipt))
            } else if let first = fresh[e.idempotencyKey] {
                let original = items[first]
                let same = original.event.stream == e.stream && original.event.type == e.type
                    && original.chain?.payloadText == parts.payloadText
                plans.append(same ? .duplicateOfNew(first) : .keyConflictWithNew(first))
            } else {
                let current = versions[e.stream] ?? 0
                if let expected = e.expectedVersion, expected != current {
                    plans.append(.versionConflict(current))
                    continue
                }
                position += 1
                versions[e.stream] = current + 1
                fresh[e.idempotencyKey] = index
                plans.append(.new(position: position, version: current + 1))
            }
        }

        // Second pass: hash the new events in order and stream their rows to
        // PostgreSQL as they are built, so it stores the first while the next are hashed.
        var hashes: [Int: [UInt8]] = [:]
        hashes.reserveCapacity(fresh.count)
        var early: [AppendOutcome]?   // the outcomes, if whileStoring asked for them
        func newReceipt(_ index: Int) -> EventReceipt {
            guard case .new(let position, let version) = plans[index], let parts = items[index].chain else {
                preconditionFailure("receipt of an item that was not appended")
            }
            return EventReceipt(position: position, eventID: parts.eventID, streamVersion: version,
                                recordedAt: recordedAt, hash: hashes[index] ?? [])
        }
        // Every item's outcome, duplicates with no redelivery count yet.
        func currentOutcomes() -> [AppendOutcome] {
            plans.indices.map { index in
                switch plans[index] {
                case .new: .appended(newReceipt(index))
                case .duplicate(let receipt): .duplicate(receipt, redeliveries: 0)
                case .duplicateOfNew(let first): .duplicate(newReceipt(first), redeliveries: 0)
                case .keyConflict(let receipt): .keyConflict(existing: receipt)
                case .keyConflictWithNew(let first): .keyConflict(existing: newReceipt(first))
                case .versionConflict(let current): .versionConflict(currentVersion: current)
                }
            }
        }
        if skipped != nil && fresh.isEmpty {
            // Nothing to COPY, so nothing takes the lock or meets the indexes: outcomes the
            // writer's memory alone decided (version conflicts) are checked with the round trip.
            return try append(items, on: connection, cache: cache, hints: nil, whileStoring: whileStoring)
        }
        if !fresh.isEmpty {
            var hashInput = [UInt8]()
            hashInput.reserveCapacity(4096)
            let copied: Int
            do {
                copied = try connection.copyIn("""
                    COPY ledger.events (position, event_id, stream, stream_version, type, source, payload, raw,
                                        metadata, idempotency_key, recorded_at, observed_at, hash)
                    FROM STDIN (FORMAT binary)
                    """, precededBy: skipped == nil ? nil : Self.appendLockSQL,
                    checkLeadingRow: skipped == nil ? nil : { row in
                        guard let text = row.last ?? nil, let now = Int64(text) else {
                            throw PostgresError.unexpectedResult("the append lock's statement did not answer the time")
                        }
                        guard recordedMicros <= now, now - recordedMicros <= Self.recordingLagLimitMicros else {
                            throw SkippedRoundTripRefused(recordedMicros: recordedMicros, postgresMicros: now)
                        }
                    }) { send in
                    var chunk = CopyBinary.header()
                    chunk.reserveCapacity(Self.chunkBytes + 4096)
                    for (index, plan) in plans.enumerated() {
                        guard case .new(let position, let version) = plan, let parts = items[index].chain else { continue }
                        hashInput.removeAll(keepingCapacity: true)
                        hashInput.append(contentsOf: headHash)
                        BinaryField.appendInt64(&hashInput, position)
                        hashInput.append(contentsOf: parts.contentHead)
                        BinaryField.appendInt32(&hashInput, Int32(truncatingIfNeeded: version))
                        hashInput.append(contentsOf: parts.contentBody)
                        BinaryField.appendInt64(&hashInput, recordedMicros)
                        BinaryField.appendInt64(&hashInput, parts.observedMicros)
                        let hash = Crypto.sha256(hashInput)
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
                    let known = currentOutcomes()
                    early = known
                    try whileStoring(known)
                }
            } catch let error as PostgresError where mayMiss && error.sqlState == "23505" {
                // A batch chained to a head that moved meets the position's index on its first
                // row. PostgreSQL checks a row's unique indexes in the order of their OIDs, and
                // the position's comes first as the migrations build the table; should it not
                // (a REINDEX CONCURRENTLY, a dump and restore), a row that also repeats a key
                // or stream is reported on that one, and the batch counts as a miss: slower
                // (the probe cooldown), never wrong.
                if skipped != nil && error.constraint == Self.positionConstraint {
                    hints?.headMoved()
                    throw HeadMoved(cause: error)
                }
                hints?.missed()
                throw ProbeHintMiss(cause: error)
            }
            guard copied == fresh.count else {
                throw PostgresError.unexpectedResult("COPY stored \(copied) events of \(fresh.count)")
            }
        }

        var outcomes = early ?? currentOutcomes()
        let duplicates: [(item: Int, position: Int64)] = outcomes.indices.compactMap { index in
            if case .duplicate(let receipt, _) = outcomes[index] { return (index, receipt.position) }
            return nil
        }
        cache?.pending = StreamVersionCache.Pending(head: position, versions: versions, headHash: headHash,
                                                    recordedMicros: recordedMicros, clockBase: clockBase,
                                                    replacesVersions: replacesVersions)
        if !duplicates.isEmpty {
            let totals = try countRedeliveries(duplicates.map(\.position), at: recordedMicros, on: connection)
            for (index, position) in duplicates {
                if case .duplicate(let receipt, _) = outcomes[index] {
                    outcomes[index] = .duplicate(receipt, redeliveries: totals[position] ?? 0)
                }
            }
        }
        return outcomes
    }

    /// What happens to one item, decided before anything is sent.
    private enum Plan {
        case new(position: Int64, version: Int)
        case duplicate(EventReceipt)
        case duplicateOfNew(Int)
        case keyConflict(EventReceipt)
        case keyConflictWithNew(Int)
        case versionConflict(Int)
    }

    /// The ledger's append lock (ledger.append_prepare and ledger.append_events take it
    /// too: Migrations 006, 015), for a batch that skips append_prepare, and
    /// PostgreSQL's clock once the lock is held.
    static let appendLockSQL = "SELECT pg_advisory_xact_lock(7413001), ledger.micros(clock_timestamp()) AS now_us"

    /// How far a skipped round trip's recording time may lag PostgreSQL's clock once the
    /// lock is held (a wait for the lock, say `ledger rebuild` holding it): past it, or
    /// ahead of that clock, the batch is retried with the round trip.
    static let recordingLagLimitMicros: Int64 = 250_000

    /// The unique constraint on ledger.events' position (Migrations/002).
    static let positionConstraint = "events_pkey"

    /// How much COPY data is built before it is sent.
    static let chunkBytes = 64 * 1024

    /// Adds one redelivery per entry (a position may repeat) and answers each position's total.
    private static func countRedeliveries(_ positions: [Int64], at micros: Int64,
                                          on connection: PostgresConnection) throws -> [Int64: Int64] {
        let result = try connection.query("""
            INSERT INTO ledger.redeliveries AS r (position, count, last_seen_at)
            SELECT p.position, count(*), ledger.from_micros($2)
              FROM unnest($1::bigint[]) AS p(position)
             GROUP BY p.position
            ON CONFLICT ON CONSTRAINT redeliveries_pkey
            DO UPDATE SET count = r.count + excluded.count, last_seen_at = excluded.last_seen_at
            RETURNING r.position, r.count
            """, [.text("{" + positions.map(String.init).joined(separator: ",") + "}"), .int(micros)])
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
