/// What the single writer knows about the log as of its own last commit: the
/// version of each stream it has seen, and the head position that commit
/// ended at. That knowledge is exact while nobody else has appended since,
/// which ledger.append_prepare checks under the append lock (Migration 018);
/// when somebody has, every stream is probed as if nothing were known.
///
/// @unchecked Sendable: used by one writer thread at a time (the
/// GroupCommitter's), never concurrently.
public final class StreamVersionCache: @unchecked Sendable {
    private(set) var committedHead: Int64?
    private(set) var versions: [String: Int] = [:]
    /// What the batch in progress learned; kept only if it commits.
    var pending: (head: Int64, versions: [String: Int])?
    private let limit: Int

    /// - Parameter limit: streams remembered at most; past it the cache starts over.
    public init(limit: Int = 100_000) { self.limit = limit }

    /// The version known for `stream`, if the cache is usable at all.
    func version(of stream: String) -> Int? {
        committedHead == nil ? nil : versions[stream]
    }

    /// The batch's transaction committed: what it learned is now known.
    public func commit() {
        guard let pending else { return }
        if versions.count + pending.versions.count > limit { versions.removeAll(keepingCapacity: true) }
        versions.merge(pending.versions) { _, new in new }
        committedHead = pending.head
        self.pending = nil
    }

    /// The batch failed, or its outcome is unknown: forget everything.
    public func invalidate() {
        versions.removeAll()
        committedHead = nil
        pending = nil
    }
}
