/// Why a maintenance command stopped; each says what was left as it was.
package enum MaintenanceError: Error, CustomStringConvertible {
    case unreadableEvent(position: Int64, String)
    case chainBroken(position: Int64, String)
    case readModelsDiffer(count: Int, first: String)
    case signaturesDoNotMatch(count: Int, first: String)

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
        }
    }
}
