import LedgerHTTP

/// What a request under /console is, decided from its method and raw path alone (a pure
/// function, tested without a server): a file, the app's page for a client-side route, a
/// redirect from /console to /console/, or a refusal.
enum ConsoleRequest: Equatable {
    /// A file of the folder, by its relative path.
    case file(String)
    /// A page the app draws itself (`/console/`, `/console/orders/{no}`, ...): index.html.
    case appPage
    /// `/console` without its slash: relative links need the folder form.
    case redirectToFolder
    /// A path segment that could climb out of the folder (`..`, an encoded slash or backslash, NUL).
    case traversal
    case notFound
    case methodNotAllowed

    static let prefix = "/console"
    /// The first segments of the app's own pages (console.md, *Pages*).
    static let appRoutes: Set<String> = ["orders", "quarantine", "ledger", "search", "signin"]

    /// Whether `path` (raw, without the query) is the console's: /console or below it.
    static func covers(_ path: String) -> Bool {
        path == prefix || path.hasPrefix(prefix + "/")
    }

    static func classify(method: String, path: String) -> ConsoleRequest {
        guard method == "GET" || method == "HEAD" else { return .methodNotAllowed }
        if path == prefix { return .redirectToFolder }
        let rest = path.dropFirst(prefix.count + 1)
        if rest.isEmpty { return .appPage }
        var segments: [String] = []
        for raw in rest.split(separator: "/", omittingEmptySubsequences: false) {
            let segment = PercentDecoding.decode(raw)
            if segment == "." || segment == ".." || segment.contains("/") || segment.contains("\\") || segment.contains("\u{0}") {
                return .traversal
            }
            segments.append(segment)
        }
        if appRoutes.contains(segments[0]) { return .appPage }
        if segments.contains("") { return .notFound }
        return .file(segments.joined(separator: "/"))
    }
}
