/// Why a maintenance command stopped; each says what was left as it was.
package enum MaintenanceError: Error, CustomStringConvertible {
    case unreadableEvent(position: Int64, String)
    case chainBroken(position: Int64, String)
    case readModelsDiffer(count: Int, first: String)
    case signaturesDoNotMatch(count: Int, first: String)
    case rebuildRunning
    case rebuildLockLost
    case rebuildRefused(String)
    case swapNotTaken(seconds: Double, attempts: Int, holders: [String])

    package var description: String {
        switch self {
        case .unreadableEvent(let position, let why):
            return "the event at position \(position) cannot be read back (\(why)); nothing was rebuilt"
        case .chainBroken(let position, let reason):
            return "hash chain broken at position \(position): \(reason)"
        case .readModelsDiffer(let count, let first):
            return "read models differ from the events: \(count) difference(s); first: \(first)"
        case .signaturesDoNotMatch(let count, let first):
            return "\(count) stored webhook signature(s) do not match their raw bytes; first: \(first)"
        case .rebuildRunning:
            return "another ledger rebuild is running (it holds the rebuild lock); nothing was rebuilt"
        case .rebuildLockLost:
            return "the rebuild's database connection was lost midway, and with it the lock that keeps it the only one running; "
                + "nothing was swapped in and the read models are as they were: run ledger rebuild again"
        case .rebuildRefused(let why):
            return why
        case .swapNotTaken(let seconds, let attempts, let holders):
            let held = holders.isEmpty ? "" : "; held by " + holders.joined(separator: "; ")
            return "could not swap the rebuilt read models in: \(attempts) attempts over \(Int(seconds.rounded())) s "
                + "could not lock ledger.orders and ledger.enrollments briefly enough\(held); "
                + "the read models are as they were and the rebuilt tables were dropped"
        }
    }
}
