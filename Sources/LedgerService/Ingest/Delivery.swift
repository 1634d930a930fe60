import LedgerCore

/// One request as the use cases see it, whatever carried it: its headers (names
/// lowercased), its body as sent, the id it is logged and answered under, where it
/// came from, and the path it was sent to (kept with a quarantined delivery).
public struct Delivery: Sendable {
    public var headers: [String: String]
    public var body: [UInt8]
    public var requestID: String
    public var remote: String
    public var path: String

    public init(headers: [String: String], body: [UInt8], requestID: String, remote: String, path: String) {
        self.headers = headers
        self.body = body
        self.requestID = requestID
        self.remote = remote
        self.path = path
    }

    /// A header's value; `name` is matched case-insensitively.
    public func header(_ name: String) -> String? {
        headers[HeaderName.lowercased(name)]
    }
}
