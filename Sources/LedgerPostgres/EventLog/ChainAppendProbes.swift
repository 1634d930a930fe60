extension ChainAppend {
    /// What a batch asks ledger.append_prepare, decided from the writer's knowledge
    /// before anything is sent: the keys to look up and the streams whose version to
    /// ask for, and what is taken without asking (versions known from the writer's last
    /// commit; keys and streams the probe hints say it never sent, taken for new).
    struct Probes {
        /// The batch may skip probes (`ProbeHints.beginBatch` said so).
        let optimistic: Bool
        /// Keys to look up, each once, in the batch's order.
        private(set) var keys: [String] = []
        /// Streams whose version must be asked for, each once, in the batch's order.
        private(set) var streams: [String] = []
        /// Streams whose version the writer knows: right if the head is where its last commit left it.
        private(set) var cached: [String: Int] = [:]
        /// Streams taken to be at version 0 without a probe.
        private(set) var assumedNew: [String: Int] = [:]
        /// Some key was taken for new without a probe.
        private(set) var skippedKeys = false
        /// Every stream the batch names.
        private(set) var allStreams: Set<String>

        /// - Parameters:
        ///   - optimistic: what `hints.beginBatch()` answered for this batch (false without hints).
        ///   - hints: consulted only when optimistic.
        ///   - cache: the versions the writer knows as of its last commit.
        init(_ items: [PreparedEvent], optimistic: Bool, hints: ProbeHints?, cache: StreamVersionCache?) {
            self.optimistic = optimistic
            var seenKeys = Set<String>(minimumCapacity: items.count)
            allStreams = Set<String>(minimumCapacity: items.count)
            assumedNew.reserveCapacity(items.count)
            // A stream an item names with an expected version is always probed: that check needs the truth.
            let checked = optimistic ? Set(items.lazy.filter { $0.event.expectedVersion != nil }.map(\.event.stream)) : []
            for item in items {
                let key = item.event.idempotencyKey, stream = item.event.stream
                if seenKeys.insert(key).inserted {
                    if optimistic, let hints, !hints.mayExist(key: item.keyFingerprint) { skippedKeys = true } else { keys.append(key) }
                }
                if allStreams.insert(stream).inserted {
                    if let known = cache?.version(of: stream) {
                        cached[stream] = known
                    } else if optimistic, let hints, !hints.mayExist(stream: item.streamFingerprint), !checked.contains(stream) {
                        assumedNew[stream] = 0
                    } else {
                        streams.append(stream)
                    }
                }
            }
        }

        /// Something was taken for new without a probe: a unique violation may then mean
        /// the guess was wrong (`ProbeHintMiss`), not that the batch is.
        var guessesAnything: Bool { skippedKeys || !assumedNew.isEmpty }

        /// Nothing to ask: the round trip may be skipped, if the writer knows the head.
        var asksNothing: Bool { optimistic && keys.isEmpty && streams.isEmpty }
    }
}
