import Foundation

/// What lets the single writer skip most of `ledger.append_prepare`'s probes: a
/// new idempotency key and a new stream each cost PostgreSQL an index probe
/// (about 3 and 2.4 µs) on the writer's serial path, and almost every key a
/// webhook brings, and every stream an order's first webhook starts, is new.
///
/// The writer remembers (in Bloom filters) the keys and streams it has sent.
/// A key it never sent is taken to be new without a probe, and a stream it never
/// sent to be at version 0. The unique constraints on `idempotency_key` and
/// `(stream, stream_version)` keep that safe: if such a key or stream did exist
/// (appended before this process started, or by another writer), the COPY fails
/// with a unique violation, the transaction rolls back whole, and the batch is
/// tried again with every key and stream probed (`ProbeHintMiss`). After a miss
/// the writer probes everything for a while (`Cooldown`), longer after each miss
/// that follows soon after the last, so traffic that keeps missing (a restart
/// under redeliveries of old events) costs a failed batch only now and then.
///
/// A filter's false "maybe" costs only a probe, so a filter that fills up makes
/// the writer probe more, never answer wrongly. Keys rotate through two filters
/// (the current and the previous `keysPerGeneration`); streams are never
/// forgotten, since forgetting one would turn its next event into a miss.
///
/// After a restart the filters would be empty, and every order that existed
/// before would cost a miss on its next event. A committer made with
/// `awaitingSeed` therefore probes everything until `absorb` hands it what the
/// store already holds (`ProbeHints.seed`: the streams of recently updated orders
/// and enrollments, the keys of the newest events), read on another thread.
///
/// @unchecked Sendable: used by one writer thread at a time (the
/// GroupCommitter's), never concurrently; only `absorb` comes from another
/// thread, through `seedLock`.
public final class ProbeHints: @unchecked Sendable {
    private var keys: BloomFilter
    private var previousKeys: BloomFilter?
    private var streams: BloomFilter
    private let keysPerGeneration: Int
    private let keyBits: Int
    private let streamBits: Int
    /// True until a seed was merged: every batch probes everything meanwhile (writer thread only).
    private var awaitingSeed: Bool
    private let seedLock = NSLock()
    private var pendingSeed: Seed?   // guarded by seedLock
    /// After a miss: batches that probe everything.
    private var probeCooldown = Cooldown()
    /// After another writer moved the head (`HeadMoved`): batches that make
    /// ledger.append_prepare's round trip (reading the head as it is), though they
    /// still skip the probes of keys and streams never sent.
    private var roundTripCooldown = Cooldown()
    /// Whether the batch begun last may skip the round trip (`beginBatch`).
    private(set) var roundTripAllowed = true

    static let shortestCooldown = 64
    static let longestCooldown = 4096

    /// - Parameters:
    ///   - keysPerGeneration: keys remembered in one filter before it becomes the previous one.
    ///   - streamBits: size of the streams' filter (2 MiB by default: about 2% false
    ///     "maybe" at two million streams, more beyond).
    ///   - awaitingSeed: take nothing for new until `absorb` delivers what the store holds.
    public init(keysPerGeneration: Int = 1 << 20, streamBits: Int = 1 << 24, awaitingSeed: Bool = false) {
        self.keysPerGeneration = max(1, keysPerGeneration)
        keyBits = self.keysPerGeneration * 8
        self.streamBits = streamBits
        keys = BloomFilter(bits: keyBits)
        streams = BloomFilter(bits: streamBits)
        self.awaitingSeed = awaitingSeed
    }

    /// Filters of these hints' shape, to fill on any thread and hand over with `absorb`.
    public struct Seed: Sendable {
        fileprivate var keys: BloomFilter
        fileprivate var streams: BloomFilter
        public mutating func insert(key: String) { keys.insert(key) }
        public mutating func insert(stream: String) { streams.insert(stream) }
    }

    public func emptySeed() -> Seed {
        Seed(keys: BloomFilter(bits: keyBits), streams: BloomFilter(bits: streamBits))
    }

    /// Keys and streams that already exist in the store, from any thread: the writer
    /// merges them before its next batch, and from then on may skip probes again.
    /// Seeds handed over before a merge are all merged.
    public func absorb(_ seed: Seed) {
        seedLock.withLock {
            if var pending = pendingSeed {
                pending.keys.formUnion(seed.keys)
                pending.streams.formUnion(seed.streams)
                pendingSeed = pending
            } else {
                pendingSeed = seed
            }
        }
    }

    public func absorb(keys seededKeys: some Sequence<String>, streams seededStreams: some Sequence<String>) {
        var seed = emptySeed()
        for key in seededKeys { seed.insert(key: key) }
        for stream in seededStreams { seed.insert(stream: stream) }
        absorb(seed)
    }

    /// Merges a seed handed over since the last batch; false while a seed is awaited and
    /// has not arrived (writer thread).
    var isSeeded: Bool {
        if let seed = seedLock.withLock({ () -> Seed? in
            defer { pendingSeed = nil }
            return pendingSeed
        }) {
            keys.formUnion(seed.keys)
            streams.formUnion(seed.streams)
            awaitingSeed = false
        }
        return !awaitingSeed
    }

    /// Whether the next batch may skip probes; counts the batch against the cooldowns
    /// (and sets `roundTripAllowed` for it).
    func beginBatch() -> Bool {
        roundTripAllowed = roundTripCooldown.tick()
        guard isSeeded else { return false }
        return probeCooldown.tick()
    }

    /// Whether `key` may already be stored: false only for a key this writer never sent.
    func mayExist(key: String) -> Bool { mayExist(key: BloomFilter.Fingerprint(key)) }

    /// Whether `stream` may already hold events: false only for a stream this writer never sent to.
    func mayExist(stream: String) -> Bool { mayExist(stream: BloomFilter.Fingerprint(stream)) }

    /// The batch about to be sent holds these: from now on they may exist.
    func remember(key: String, stream: String) {
        remember(key: BloomFilter.Fingerprint(key), stream: BloomFilter.Fingerprint(stream))
    }

    /// The same by fingerprint (`PreparedEvent` takes them on the submitting thread).
    func mayExist(key: BloomFilter.Fingerprint) -> Bool {
        keys.mayContain(key) || (previousKeys?.mayContain(key) ?? false)
    }

    func mayExist(stream: BloomFilter.Fingerprint) -> Bool {
        streams.mayContain(stream)
    }

    func remember(key: BloomFilter.Fingerprint, stream: BloomFilter.Fingerprint) {
        if keys.insertions >= keysPerGeneration {
            previousKeys = keys
            keys = BloomFilter(bits: keyBits)
        }
        keys.insert(key)
        streams.insert(stream)
    }

    /// An optimistic batch met a key or stream that did exist: probe everything for a
    /// while, twice as long as last time if the last miss was recent.
    func missed() {
        probeCooldown.trip()
    }

    /// A batch that skipped the round trip found another writer's events where it
    /// meant to append (`HeadMoved`): make the round trip for a while (twice as long
    /// if it happened recently), so a second live writer costs a failed batch now and
    /// then, not every other batch. Nothing the filters said was wrong: keys and
    /// streams never sent still go unprobed.
    func headMoved() {
        roundTripCooldown.trip()
    }

    /// Batches to hold back after a failure: `shortestCooldown`, twice as many when the
    /// failure comes within twice the last cooldown of the one before, up to `longestCooldown`.
    struct Cooldown {
        private var remaining = 0
        private var next = ProbeHints.shortestCooldown
        private var batchesSinceTrip = Int.max

        /// Counts one batch: true when the cooldown is over (the batch may be optimistic).
        mutating func tick() -> Bool {
            if batchesSinceTrip < Int.max { batchesSinceTrip += 1 }
            guard remaining > 0 else { return true }
            remaining -= 1
            return false
        }

        mutating func trip() {
            next = batchesSinceTrip <= 2 * next ? min(2 * next, ProbeHints.longestCooldown) : ProbeHints.shortestCooldown
            remaining = next
            batchesSinceTrip = 0
        }
    }
}

/// A batch that skipped ledger.append_prepare's round trip found, once it held the
/// append lock, that its recording time was behind PostgreSQL's clock by more than
/// `ChainAppend.recordingLagLimitMicros` (it waited for the lock), or ahead of it: its
/// COPY was abandoned, and it is worth trying again at once with the round trip.
public struct SkippedRoundTripRefused: Error, CustomStringConvertible {
    public let recordedMicros: Int64
    public let postgresMicros: Int64
    public var description: String {
        "a batch dated \(recordedMicros) µs found PostgreSQL's clock at \(postgresMicros) µs once it held the append lock; retried with the round trip"
    }
}

/// A batch that skipped ledger.append_prepare's round trip found its first position
/// taken: another writer appended since this writer's last commit. Nothing the probe
/// hints guessed was wrong, so keys and streams never sent stay unprobed; the batch is
/// retried at once with the round trip, which reads the head as it is now, and the next
/// batches make it too for a while (`ProbeHints.headMoved`).
public struct HeadMoved: Error, CustomStringConvertible {
    public let cause: PostgresError
    public var description: String {
        "another writer appended since the writer's last commit (\(cause)); the batch is retried with the round trip"
    }
}

/// An optimistic batch (see `ProbeHints`) met an idempotency key or stream that
/// already existed: its transaction rolled back, and it is worth trying again at
/// once with every key and stream probed.
public struct ProbeHintMiss: Error, CustomStringConvertible {
    public let cause: PostgresError
    public var description: String {
        "the writer took a key or stream for new and it was not (\(cause)); the batch is retried with every key and stream probed"
    }
}
