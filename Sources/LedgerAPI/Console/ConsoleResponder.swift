import LedgerHTTP

/// Answers every request under /console from the files in memory, each answer with the
/// headers console.md requires. The files need no token: the API calls the pages make do.
struct ConsoleResponder: Sendable {
    /// Nil when `ledger serve` found no console folder: /console then says so.
    let files: ConsoleFiles?

    /// console.md, *How it is built*: no inline script, no eval, no framing, no sniffing,
    /// no referrer (a URL holds an order number, never a token, but it leaks nothing either way).
    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
    ]

    func respond(method: String, path: String) -> HTTPResponse {
        var response = answer(ConsoleRequest.classify(method: method, path: path))
        response.headers += Self.securityHeaders
        return response
    }

    private func answer(_ request: ConsoleRequest) -> HTTPResponse {
        guard let files else {
            return .problem(status: 404, title: "Not found",
                            detail: "this ledger serve found no console folder: set LEDGER_CONSOLE to the Console/ folder")
        }
        switch request {
        case .appPage:
            guard let page = files.files[ConsoleFiles.appPage] else { return answer(.file(ConsoleFiles.appPage)) }
            return Self.serve(page)
        case .file(let name):
            guard let file = files.files[name] else {
                // A path that names no file type is a page of the app (it says "no such page"
                // in words); a missing file is a 404.
                if !(name.split(separator: "/").last ?? "").contains(".") { return answer(.appPage) }
                return .problem(status: 404, title: "Not found", detail: "the console has no file \(name)")
            }
            return Self.serve(file)
        case .redirectToFolder:
            return HTTPResponse(status: 308, headers: [("Location", ConsoleRequest.prefix + "/")])
        case .traversal:
            return .problem(status: 400, title: "Bad request", detail: "a console path may not hold '.', '..', an encoded slash or NUL")
        case .notFound:
            return .problem(status: 404, title: "Not found", detail: "the console has no such file")
        case .methodNotAllowed:
            return .problem(status: 405, title: "Method Not Allowed", detail: "The console accepts GET, HEAD.",
                            headers: [("Allow", "GET, HEAD")])
        }
    }

    /// `no-cache`: a browser asks again each time, so a new release of the files shows at once.
    private static func serve(_ file: ConsoleFiles.File) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", file.contentType), ("Cache-Control", "no-cache")], body: .bytes(file.bytes))
    }
}
