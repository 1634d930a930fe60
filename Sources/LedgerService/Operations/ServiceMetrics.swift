import LedgerObservability
import LedgerPostgres
import Synchronization

/// The service's Prometheus metrics beyond the HTTP layer's own: events
/// appended, duplicates, rejected deliveries by reason, group-commit batches,
/// and database pool use. Store counters are read from the committer at
/// scrape time.
package struct ServiceMetrics: Sendable {
    package let registry: MetricsRegistry
    package let rejectedDeliveries: Counter
    package let quarantineFull: Counter
    package let quarantineRateLimited: Counter

    /// - Parameters:
    ///   - pool: the pool of writes and most work; `readPool`: the one inline reads use, if separate.
    package init(registry: MetricsRegistry, committer: GroupCommitter, pool: ConnectionPool, readPool: ConnectionPool? = nil) {
        self.registry = registry
        rejectedDeliveries = registry.counter("ledger_rejected_deliveries_total",
                                              help: "Webhook deliveries refused and quarantined, by reason", labels: ["reason"])
        quarantineFull = registry.counter("ledger_quarantine_full_total",
                                          help: "Rejected deliveries counted but not kept: the quarantine had reached LEDGER_QUARANTINE_MAX_BYTES")
        quarantineRateLimited = registry.counter("ledger_quarantine_rate_limited_total",
                                                 help: "Rejected deliveries counted but not kept: their remote address had used up LEDGER_QUARANTINE_PER_SOURCE")
        let appended = registry.counter("ledger_events_appended_total", help: "Events appended to ledger.events")
        let duplicates = registry.counter("ledger_event_duplicates_total", help: "Appends answered as duplicates (redeliveries)")
        let batches = registry.counter("ledger_group_commit_batches_total", help: "Group-commit transactions committed")
        let failed = registry.counter("ledger_group_commit_failures_total", help: "Group-commit transactions that failed")
        let retried = registry.counter("ledger_group_commit_retries_total",
                                       help: "Group commits tried again in full: a new order's row already existed without events (retried with upserts), or a key or stream taken for new existed (retried with every probe)")
        let skipped = registry.counter("ledger_group_commit_round_trips_skipped_total",
                                       help: "Group commits that skipped the probe round trip: nothing to probe, the head known from the writer's last commit")
        let probeMisses = registry.counter("ledger_group_commit_probe_misses_total",
                                           help: "Group commits whose idempotency key or stream, taken for new without a probe, already existed (rolled back and retried with every key and stream probed)")
        let hintsSeeded = registry.gauge("ledger_group_commit_hints_seeded",
                                         help: "1 once the writer's probe hints hold the recent orders and keys read at startup (until then every key and stream is probed)")
        let writerSeconds = registry.counter("ledger_group_commit_seconds_total",
                                             help: "Writer time of committed group commits, by phase: append (with BEGIN), project (read models), commit (with its fsync)",
                                             labels: ["phase"])
        let poolGauge = registry.gauge("ledger_db_pool_connections", help: "Database pool connections by state", labels: ["state"])
        let readPoolGauge = readPool == nil ? nil
            : registry.gauge("ledger_db_read_pool_connections",
                             help: "Connections of the pool that inline reads use, by state", labels: ["state"])
        let last = Mutex(GroupCommitter.Statistics())
        registry.addCollector {
            let now = committer.stats
            let before = last.withLock { l -> GroupCommitter.Statistics in
                let b = l
                l = now
                return b
            }
            appended.increment(by: Double(now.appended - before.appended))
            duplicates.increment(by: Double(now.duplicates - before.duplicates))
            batches.increment(by: Double(now.batches - before.batches))
            failed.increment(by: Double(now.failedBatches - before.failedBatches))
            retried.increment(by: Double(now.retriedBatches - before.retriedBatches))
            probeMisses.increment(by: Double(now.probeHintMisses - before.probeHintMisses))
            skipped.increment(by: Double(now.roundTripsSkipped - before.roundTripsSkipped))
            hintsSeeded.set(now.hintsSeeded ? 1 : 0)
            writerSeconds.increment(by: Double(now.appendNanos - before.appendNanos) / 1e9, "append")
            writerSeconds.increment(by: Double(now.projectNanos - before.projectNanos) / 1e9, "project")
            writerSeconds.increment(by: Double(now.commitNanos - before.commitNanos) / 1e9, "commit")
            let usage = pool.usage
            poolGauge.set(Double(usage.inUse), "in_use")
            poolGauge.set(Double(usage.open), "open")
            poolGauge.set(Double(usage.size), "max")
            poolGauge.set(Double(usage.waiting), "waiting")
            if let readPool, let readPoolGauge {
                let reads = readPool.usage
                readPoolGauge.set(Double(reads.inUse), "in_use")
                readPoolGauge.set(Double(reads.open), "open")
                readPoolGauge.set(Double(reads.size), "max")
                readPoolGauge.set(Double(reads.waiting), "waiting")
            }
        }
    }
}
