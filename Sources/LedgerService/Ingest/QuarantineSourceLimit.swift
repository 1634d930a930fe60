import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How many rejected deliveries each remote address may have kept in the
/// quarantine: a token bucket an address, `perMinute` deep, refilled at
/// `perMinute` a minute. Past it, that address's rejections are still
/// answered 401 and counted, but not kept, so one forger cannot spend the
/// whole quarantine budget (`QuarantineBudget`) and crowd out everyone
/// else's evidence.
///
/// A source is an IPv4 address, or an IPv6 address's /64 (one host usually
/// holds a whole /64). Behind a reverse proxy every delivery comes from the
/// proxy, so all senders share one bucket: raise the rate there (docs/operations.md, LEDGER_QUARANTINE_PER_SOURCE).
///
/// Memory is bounded: at most `maxSources` sources are tracked. When that
/// many are active, a new address is not kept until some bucket refills
/// (the conservative choice: a flood from many addresses is still a flood).
package final class QuarantineSourceLimit: @unchecked Sendable {
    // @unchecked: `buckets` is guarded by `lock`.
    package let perMinute: Int
    package let maxSources: Int
    private let lock = NSLock()
    private var buckets: [String: (tokens: Double, at: ContinuousClock.Instant)] = [:]

    package init(perMinute: Int, maxSources: Int = 10_000) {
        self.perMinute = max(1, perMinute)
        self.maxSources = max(1, maxSources)
    }

    /// Takes one token of `address`'s bucket; false when it has none left.
    package func allows(_ address: String, now: ContinuousClock.Instant = .now) -> Bool {
        let address = Self.source(of: address)
        return lock.withLock {
            var bucket = buckets[address] ?? (Double(perMinute), now)
            bucket.tokens = min(Double(perMinute), bucket.tokens + refill(since: bucket.at, now: now))
            bucket.at = now
            if buckets[address] == nil && buckets.count >= maxSources {
                forgetFullBuckets(now: now)
                if buckets.count >= maxSources { return false }
            }
            guard bucket.tokens >= 1 else {
                buckets[address] = bucket
                return false
            }
            bucket.tokens -= 1
            buckets[address] = bucket
            return true
        }
    }

    package var trackedSources: Int { lock.withLock { buckets.count } }

    /// The bucket's key: an IPv4 address as it is, an IPv6 address as its /64 prefix.
    package static func source(of address: String) -> String {
        guard address.contains(":") else { return address }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        return bytes[0..<8].map { String($0, radix: 16) }.joined(separator: ".") + "/64"
    }

    private func refill(since then: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Double {
        let elapsed = now - then
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return max(0, seconds) * Double(perMinute) / 60
    }

    /// Drops the addresses whose bucket has refilled: they are as good as new.
    private func forgetFullBuckets(now: ContinuousClock.Instant) {
        buckets = buckets.filter { _, bucket in
            bucket.tokens + refill(since: bucket.at, now: now) < Double(perMinute)
        }
    }
}
