import LedgerCore

extension ChainAppend {
    /// A stored event the batch's keys name.
    struct Stored: Equatable {
        var receipt: EventReceipt
        var stream: String
        var type: String
        var payloadText: [UInt8]
    }

    /// Where a batch's chain starts, as the append lock found it: the head it follows,
    /// the time its events are recorded at, each stream's version, and the stored
    /// events its keys name. Read from ledger.append_prepare's answer, or, when the
    /// round trip is skipped, from what the writer knows of its own last commit.
    struct Start {
        var headPosition: Int64
        var headHash: [UInt8]
        var recordedMicros: Int64
        /// Each stream's version before the batch, for every stream it names (`Plan`
        /// advances them to the versions after it).
        var versions: [String: Int]
        var stored: [String: Stored]
        /// PostgreSQL's clock as the round trip read it, and the writer's monotonic
        /// clock when its answer came; nil when the round trip was skipped.
        var clockBase: (postgresMicros: Int64, uptimeNanos: UInt64)?
        /// The head had moved since the writer's last commit (someone else appended):
        /// the versions read now replace everything the writer knew.
        var replacesVersions: Bool

        var skippedRoundTrip: Bool { clockBase == nil }

        /// The round trip skipped: the head as the writer's last commit left it, dated by
        /// `StreamVersionCache.recordingTime`; every version is known or taken for 0.
        init(skipped known: (head: Int64, hash: [UInt8], recordedMicros: Int64), probes: Probes) {
            headPosition = known.head
            headHash = known.hash
            recordedMicros = known.recordedMicros
            versions = probes.assumedNew
            versions.merge(probes.cached) { assumed, _ in assumed }
            stored = [:]
            clockBase = nil
            replacesVersions = false
        }

        /// From ledger.append_prepare's answer (`answeredAt`: the writer's monotonic clock
        /// when it came). `cachedHead` and `committedRecordedMicros` are the head and its
        /// recording time as of the writer's last commit, if it knows them.
        init(answer: QueryResult, answeredAt: UInt64, probes: Probes,
             cachedHead: Int64?, committedRecordedMicros: Int64?) throws {
            var headPosition: Int64 = 0
            var headHash = ChainHash.genesis
            var versions = probes.assumedNew
            var stored: [String: Stored] = [:]
            var replacesVersions = false
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
                        versions.merge(probes.cached) { probed, _ in probed }
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
            guard probes.allStreams.allSatisfy({ versions[$0] != nil }) else {
                throw PostgresError.unexpectedResult("ledger.append_prepare did not answer every stream's version")
            }
            self.headPosition = headPosition
            self.headHash = headHash
            self.versions = versions
            self.stored = stored
            self.replacesVersions = replacesVersions
            clockBase = (postgresMicros, answeredAt)
            // After a batch dated by the writer (a little behind PostgreSQL's clock), never earlier.
            let previous = cachedHead == headPosition ? committedRecordedMicros : nil
            recordedMicros = max(postgresMicros, previous ?? postgresMicros)
        }
    }
}
