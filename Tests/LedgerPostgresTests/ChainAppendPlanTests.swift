import LedgerCore
@testable import LedgerPostgres
import Testing

/// The writer's append path decides in pure steps before it sends anything: what to
/// ask ledger.append_prepare (`Probes`), where the chain starts (`Start`, from that
/// answer or from the writer's last commit), what becomes of each item (`Plan`) and
/// each new event's hash (`linkHash`). Tested here without PostgreSQL.
@Suite("The writer's append plan")
struct ChainAppendPlanTests {
    static func prepared(_ key: String, stream: String = "order-A1", payload: String = #"{"status":3}"#,
                         expectedVersion: Int? = nil) -> PreparedEvent {
        PreparedEvent(sampleEvent(key: key, stream: stream, payload: payload, expectedVersion: expectedVersion))
    }

    static func receipt(_ position: Int64, version: Int = 1) -> EventReceipt {
        EventReceipt(position: position, eventID: "00000000-0000-7000-8000-00000000000\(position % 10)",
                     streamVersion: version, recordedAt: Timestamp(microseconds: 1_000), hash: Array(repeating: 7, count: 32))
    }

    /// A cache as the writer's last commit left it.
    static func cache(head: Int64, versions: [String: Int], recordedMicros: Int64 = 500) -> StreamVersionCache {
        let cache = StreamVersionCache()
        cache.pending = StreamVersionCache.Pending(head: head, versions: versions, headHash: ChainHash.genesis,
                                                   recordedMicros: recordedMicros, clockBase: nil)
        cache.commit()
        return cache
    }

    // MARK: Probes

    @Test("without hints or cache every key and stream is asked for once, in the batch's order")
    func probesAskEverything() {
        let items = [Self.prepared("k1", stream: "s1"), Self.prepared("k2", stream: "s2"),
                     Self.prepared("k1", stream: "s1"), Self.prepared("k3", stream: "s1")]
        let probes = ChainAppend.Probes(items, optimistic: false, hints: nil, cache: nil)
        #expect(probes.keys == ["k1", "k2", "k3"])
        #expect(probes.streams == ["s1", "s2"])
        #expect(probes.allStreams == ["s1", "s2"])
        #expect(probes.cached.isEmpty && probes.assumedNew.isEmpty && !probes.skippedKeys)
        #expect(!probes.guessesAnything && !probes.asksNothing)
    }

    @Test("an optimistic batch takes keys and streams never sent for new, and probes the rest")
    func probesTrustHints() {
        let hints = ProbeHints()
        hints.remember(key: "sent", stream: "s-sent")
        let items = [Self.prepared("sent", stream: "s-new"), Self.prepared("fresh", stream: "s-sent"),
                     Self.prepared("checked", stream: "s-checked", expectedVersion: 0)]
        let probes = ChainAppend.Probes(items, optimistic: true, hints: hints, cache: nil)
        #expect(probes.keys == ["sent"])
        #expect(probes.skippedKeys)
        // A stream named with an expected version is probed even if never sent: that check needs the truth.
        #expect(probes.streams == ["s-sent", "s-checked"])
        #expect(probes.assumedNew == ["s-new": 0])
        #expect(probes.guessesAnything && !probes.asksNothing)
    }

    @Test("versions the writer knows from its last commit are not asked for; a batch of new keys and known streams asks nothing")
    func probesUseTheCache() {
        let cache = Self.cache(head: 9, versions: ["s1": 4])
        let items = [Self.prepared("new-1", stream: "s1"), Self.prepared("new-2", stream: "s2")]
        let probes = ChainAppend.Probes(items, optimistic: true, hints: ProbeHints(), cache: cache)
        #expect(probes.keys.isEmpty && probes.streams.isEmpty)
        #expect(probes.cached == ["s1": 4])
        #expect(probes.assumedNew == ["s2": 0])
        #expect(probes.asksNothing)
    }

    // MARK: Start

    static let columns = ["kind", "position", "event_id", "stream", "stream_version", "type", "payload", "key",
                          "recorded_us", "hash"]
    static let hashText = "\\x" + String(repeating: "ab", count: 32)

    static func headRow(position: Int64?, recordedMicros: Int64 = 2_000) -> [String?] {
        ["head", position.map(String.init), nil, nil, nil, nil, nil, nil, String(recordedMicros), position == nil ? nil : hashText]
    }

    static func streamRow(_ stream: String, _ version: Int) -> [String?] {
        ["stream", nil, nil, stream, String(version), nil, nil, nil, nil, nil]
    }

    @Test("append_prepare's answer gives the head, the stored events by key and every stream's version")
    func startFromTheAnswer() throws {
        let items = [Self.prepared("old", stream: "s1"), Self.prepared("new", stream: "s2")]
        let probes = ChainAppend.Probes(items, optimistic: false, hints: nil, cache: nil)
        let answer = QueryResult(columns: Self.columns, rows: [
            Self.headRow(position: 41),
            ["stored", "7", "00000000-0000-7000-8000-000000000007", "s1", "3", "StatusObserved", #"{"status": 3}"#, "old",
             "1500", Self.hashText],
            Self.streamRow("s1", 3), Self.streamRow("s2", 0),
        ], affectedRows: 0)
        let start = try ChainAppend.Start(answer: answer, answeredAt: 99, probes: probes, cachedHead: nil,
                                          committedRecordedMicros: nil)
        #expect(start.headPosition == 41)
        #expect(start.headHash == Array(repeating: 0xab, count: 32))
        #expect(start.recordedMicros == 2_000)
        #expect(start.versions == ["s1": 3, "s2": 0])
        #expect(start.stored["old"]?.receipt.position == 7)
        #expect(start.stored["old"]?.payloadText == Array(#"{"status": 3}"#.utf8))
        #expect(start.clockBase?.postgresMicros == 2_000 && start.clockBase?.uptimeNanos == 99)
        #expect(!start.skippedRoundTrip && !start.replacesVersions)
    }

    @Test("an empty ledger's head is position 0 and the genesis hash")
    func startOfAnEmptyLedger() throws {
        let probes = ChainAppend.Probes([Self.prepared("k")], optimistic: false, hints: nil, cache: nil)
        let answer = QueryResult(columns: Self.columns, rows: [Self.headRow(position: nil), Self.streamRow("order-A1", 0)],
                                 affectedRows: 0)
        let start = try ChainAppend.Start(answer: answer, answeredAt: 0, probes: probes, cachedHead: nil,
                                          committedRecordedMicros: nil)
        #expect(start.headPosition == 0 && start.headHash == ChainHash.genesis)
    }

    @Test("with the head where the writer's last commit left it, the versions it knows are used and time never goes back")
    func startTrustsTheCacheAtItsHead() throws {
        let cache = Self.cache(head: 41, versions: ["s1": 6], recordedMicros: 2_500)
        let probes = ChainAppend.Probes([Self.prepared("k", stream: "s1")], optimistic: false, hints: nil, cache: cache)
        let answer = QueryResult(columns: Self.columns, rows: [Self.headRow(position: 41, recordedMicros: 2_000)],
                                 affectedRows: 0)
        let start = try ChainAppend.Start(answer: answer, answeredAt: 0, probes: probes, cachedHead: 41,
                                          committedRecordedMicros: 2_500)
        #expect(start.versions == ["s1": 6])
        #expect(start.recordedMicros == 2_500)   // the last batch was dated 2,500: not before it
        #expect(!start.replacesVersions)
    }

    @Test("with the head moved by another writer, the versions read now replace what the writer knew")
    func startDistrustsTheCacheElsewhere() throws {
        let cache = Self.cache(head: 40, versions: ["s1": 6])
        let probes = ChainAppend.Probes([Self.prepared("k", stream: "s1")], optimistic: false, hints: nil, cache: cache)
        let answer = QueryResult(columns: Self.columns, rows: [Self.headRow(position: 41), Self.streamRow("s1", 7)],
                                 affectedRows: 0)
        let start = try ChainAppend.Start(answer: answer, answeredAt: 0, probes: probes, cachedHead: 40,
                                          committedRecordedMicros: 9_999)
        #expect(start.versions == ["s1": 7])
        #expect(start.replacesVersions)
        #expect(start.recordedMicros == 2_000)   // PostgreSQL's clock: the cached time belongs to another head
    }

    @Test("an answer without the head, or without a stream's version, is refused")
    func startRefusesAnIncompleteAnswer() {
        let probes = ChainAppend.Probes([Self.prepared("k", stream: "s1")], optimistic: false, hints: nil, cache: nil)
        #expect(throws: PostgresError.self) {
            try ChainAppend.Start(answer: QueryResult(columns: Self.columns, rows: [Self.streamRow("s1", 0)], affectedRows: 0),
                                  answeredAt: 0, probes: probes, cachedHead: nil, committedRecordedMicros: nil)
        }
        #expect(throws: PostgresError.self) {
            try ChainAppend.Start(answer: QueryResult(columns: Self.columns, rows: [Self.headRow(position: 3)], affectedRows: 0),
                                  answeredAt: 0, probes: probes, cachedHead: nil, committedRecordedMicros: nil)
        }
    }

    @Test("a skipped round trip starts at the writer's last head, with versions known or taken for 0")
    func startSkipped() {
        let cache = Self.cache(head: 12, versions: ["s1": 2])
        let probes = ChainAppend.Probes([Self.prepared("k1", stream: "s1"), Self.prepared("k2", stream: "s2")],
                                        optimistic: true, hints: ProbeHints(), cache: cache)
        let start = ChainAppend.Start(skipped: (head: 12, hash: ChainHash.genesis, recordedMicros: 3_000), probes: probes)
        #expect(start.headPosition == 12 && start.recordedMicros == 3_000)
        #expect(start.versions == ["s1": 2, "s2": 0])
        #expect(start.stored.isEmpty && start.skippedRoundTrip && !start.replacesVersions)
    }

    // MARK: Plan

    @Test("new items are numbered after the head with their streams' next versions; repeats and conflicts are told apart")
    func planClassifies() throws {
        let stored = Self.prepared("stored", stream: "s1")
        let items = [
            Self.prepared("a", stream: "s1"),                                   // new: 11, s1 v4
            Self.prepared("stored", stream: "s1"),                              // a redelivery of a stored event
            Self.prepared("stored", stream: "s1", payload: #"{"status":4}"#),   // the stored key, other content
            Self.prepared("a", stream: "s1"),                                   // a repeat of the new "a"
            Self.prepared("a", stream: "s2"),                                   // "a"'s key on another stream
            Self.prepared("b", stream: "s2", expectedVersion: 5),               // s2 is at 0
            Self.prepared("c", stream: "s2", expectedVersion: 0),               // new: 12, s2 v1
            Self.prepared("d", stream: "s1"),                                   // new: 13, s1 v5
        ]
        let storedEvent = ChainAppend.Stored(receipt: Self.receipt(7, version: 2), stream: "s1", type: "StatusObserved",
                                             payloadText: stored.chain!.payloadText)
        var versions = ["s1": 3, "s2": 0]
        let plan = try ChainAppend.Plan(items, stored: ["stored": storedEvent], head: 10, versions: &versions)
        #expect(plan.items == [
            .new(position: 11, version: 4), .duplicate(Self.receipt(7, version: 2)), .keyConflict(Self.receipt(7, version: 2)),
            .duplicateOfNew(0), .keyConflictWithNew(0), .versionConflict(0), .new(position: 12, version: 1),
            .new(position: 13, version: 5),
        ])
        #expect(plan.newCount == 3 && plan.head == 13)
        #expect(versions == ["s1": 5, "s2": 1])
    }

    @Test("a batch with nothing new leaves the head and the versions where they were")
    func planNothingNew() throws {
        var versions = ["s1": 3]
        let plan = try ChainAppend.Plan([Self.prepared("k", stream: "s1", expectedVersion: 1)], stored: [:], head: 10,
                                        versions: &versions)
        #expect(plan.items == [.versionConflict(3)])
        #expect(plan.newCount == 0 && plan.head == 10 && versions == ["s1": 3])
    }

    @Test("outcomes carry the new events' receipts, and duplicates get their redelivery counts by position")
    func planOutcomes() throws {
        let items = [Self.prepared("a"), Self.prepared("stored"), Self.prepared("a"), Self.prepared("stored")]
        let storedEvent = ChainAppend.Stored(receipt: Self.receipt(7), stream: "order-A1", type: "StatusObserved",
                                             payloadText: items[1].chain!.payloadText)
        var versions = ["order-A1": 1]
        let plan = try ChainAppend.Plan(items, stored: ["stored": storedEvent], head: 7, versions: &versions)
        let hash = Array(repeating: UInt8(1), count: 32)
        let recordedAt = Timestamp(microseconds: 5_000)
        var outcomes = plan.outcomes(items, hashes: [0: hash], recordedAt: recordedAt)
        let appended = EventReceipt(position: 8, eventID: items[0].chain!.eventID, streamVersion: 2, recordedAt: recordedAt,
                                    hash: hash)
        #expect(outcomes == [.appended(appended), .duplicate(Self.receipt(7), redeliveries: 0),
                             .duplicate(appended, redeliveries: 0), .duplicate(Self.receipt(7), redeliveries: 0)])
        let duplicates = ChainAppend.Plan.duplicates(in: outcomes)
        #expect(duplicates.map(\.item) == [1, 2, 3] && duplicates.map(\.position) == [7, 8, 7])
        ChainAppend.Plan.fill(&outcomes, redeliveries: [7: 5, 8: 1], of: duplicates)
        #expect(outcomes == [.appended(appended), .duplicate(Self.receipt(7), redeliveries: 5),
                             .duplicate(appended, redeliveries: 1), .duplicate(Self.receipt(7), redeliveries: 5)])
    }

    @Test("an item the writer cannot render is refused by the plan")
    func planRefusesUnrenderable() {
        let bad = PreparedEvent(NewEvent(stream: "s", type: "StatusObserved", source: "webhook", payloadJSON: "{not json",
                                         idempotencyKey: "bad", observedAt: Timestamp(seconds: 1_767_225_600)))
        var versions = ["s": 0]
        #expect(throws: PostgresError.self) { try ChainAppend.Plan([bad], stored: [:], head: 0, versions: &versions) }
    }

    // MARK: Hash

    @Test("a new event's link hash is the one recomputed from its stored columns")
    func linkHashMatchesTheChain() throws {
        let item = Self.prepared("h", payload: #"{"b":[1,2.50,"x"],"a":null}"#)
        let parts = try #require(item.chain)
        let previous = Array(repeating: UInt8(0x5a), count: 32)
        var scratch = [UInt8]()
        let hash = ChainAppend.linkHash(previous: previous, position: 42, version: 3, parts: parts,
                                        recordedMicros: 1_767_225_600_123_456, scratch: &scratch)
        let e = item.event
        let stored = StoredEvent(
            position: 42, eventID: parts.eventID, stream: e.stream, streamVersion: 3, type: e.type, source: e.source,
            payloadJSON: String(decoding: parts.payloadText, as: UTF8.self), raw: e.raw,
            metadataJSON: String(decoding: try #require(PreparedEvent.jsonbText(e.metadataJSON)), as: UTF8.self),
            idempotencyKey: e.idempotencyKey, recordedAt: Timestamp(microseconds: 1_767_225_600_123_456),
            observedAt: e.observedAt, hash: [])
        #expect(hash == ChainHash.hash(previous: previous, event: stored))
        // The scratch buffer is reused: a second link over it is as if fresh.
        let again = ChainAppend.linkHash(previous: previous, position: 42, version: 3, parts: parts,
                                         recordedMicros: 1_767_225_600_123_456, scratch: &scratch)
        #expect(again == hash)
    }
}
