import LedgerCore
import LedgerTestSupport

/// The service answers in JSON: a reply's body read as the core's JSON values.
extension Reply {
    /// The body parsed as JSON, or nil when it is not JSON.
    var json: JSONValue? { try? JSONValue.parse(body) }

    subscript(key: String) -> JSONValue? { json?[key] }

    /// True when this is an RFC 9457 problem whose `status` matches the HTTP status.
    var isProblem: Bool {
        guard header("Content-Type")?.lowercased().hasPrefix("application/problem+json") == true, let j = json else { return false }
        return j["type"]?.stringValue != nil && j["title"]?.stringValue?.isEmpty == false
            && j["status"]?.int64Value == Int64(status) && j["detail"]?.stringValue?.isEmpty == false
    }
}
