@testable import LedgerAPI
import LedgerTestSupport
import Testing

/// console.md, *How it is built*: `ledger serve` serves the console's files at /console/ with
/// its security headers, the app's page for every client-side route, and nothing outside the folder.
@Suite("The console: its files under /console/, with console.md's headers, and nothing else")
final class ConsoleServingTests {
    let ledger: LedgerFixture
    init() throws { ledger = try .start("console") }
    deinit { ledger.stop() }

    private func expectSecurityHeaders(_ reply: Reply, _ what: String) {
        #expect(reply.header("Content-Security-Policy") == "default-src 'self'; frame-ancestors 'none'", "\(what): \(reply.headers)")
        #expect(reply.header("X-Content-Type-Options") == "nosniff", "\(what)")
        #expect(reply.header("Referrer-Policy") == "no-referrer", "\(what)")
    }

    @Test("every file of Console/ is served with its Content-Type and the three headers, without a token")
    func files() throws {
        let files = try LedgerFixture.consoleFiles()
        #expect(files.files.keys.contains("index.html"))
        for (name, file) in files.files {
            let reply = try ledger.client.get("/console/" + name)
            #expect(reply.status == 200, "\(name): \(reply)")
            #expect(reply.body == file.bytes, "\(name)")
            #expect(reply.header("Content-Type") == file.contentType, "\(name)")
            expectSecurityHeaders(reply, name)
        }
        #expect(ConsoleFiles.contentType("app.js") == "text/javascript; charset=utf-8")
        #expect(ConsoleFiles.contentType("app.css") == "text/css; charset=utf-8")
        #expect(ConsoleFiles.contentType("index.html") == "text/html; charset=utf-8")
    }

    @Test("the app's own pages answer with index.html", arguments: [
        "/console/", "/console/orders/ORD-1", "/console/orders/A.b_c:d-1", "/console/orders/NOPE-404", "/console/quarantine",
        "/console/ledger", "/console/search", "/console/no/such/page",
    ])
    func appPages(_ path: String) throws {
        let reply = try ledger.client.get(path)
        #expect(reply.status == 200, "\(path): \(reply)")
        #expect(reply.body == LedgerFixture.consoleFilesOrEmpty["index.html"], "\(path)")
        #expect(reply.header("Content-Type") == "text/html; charset=utf-8")
        expectSecurityHeaders(reply, path)
    }

    @Test("/console redirects to /console/")
    func folderRedirect() throws {
        let reply = try ledger.client.get("/console")
        #expect(reply.status == 308 && reply.header("Location") == "/console/", "\(reply)")
        expectSecurityHeaders(reply, "/console")
    }

    @Test("a path that climbs out of the folder is refused with 400, however it is spelled", arguments: [
        "/console/../API/openapi.json", "/console/%2e%2e/Package.swift", "/console/..%2fPackage.swift", "/console/.%2e/x",
        "/console/orders/..", "/console/a%5c..%5cb", "/console/%00", "/console/./index.html",
    ])
    func traversal(_ path: String) throws {
        let reply = try ledger.client.get(path)
        #expect(reply.status == 400 && reply.isProblem, "\(path): \(reply)")
        expectSecurityHeaders(reply, path)
    }

    @Test("an unknown file is 404, and a write is 405, both with the headers")
    func refusals() throws {
        let missing = try ledger.client.get("/console/nope.js")
        #expect(missing.status == 404 && missing.isProblem, "\(missing)")
        expectSecurityHeaders(missing, "404")
        let post = try ledger.client.post("/console/", json: "{}")
        #expect(post.status == 405 && post.header("Allow") == "GET, HEAD", "\(post)")
        expectSecurityHeaders(post, "405")
    }

    @Test("the classification is a pure function of method and path")
    func classification() {
        #expect(ConsoleRequest.classify(method: "GET", path: "/console/app.js") == .file("app.js"))
        #expect(ConsoleRequest.classify(method: "GET", path: "/console/views/order.js") == .file("views/order.js"))
        #expect(ConsoleRequest.classify(method: "HEAD", path: "/console/") == .appPage)
        #expect(ConsoleRequest.classify(method: "GET", path: "/console/orders/X%2FY") == .traversal)
        #expect(ConsoleRequest.classify(method: "GET", path: "/console//app.js") == .notFound)
        #expect(ConsoleRequest.classify(method: "DELETE", path: "/console/") == .methodNotAllowed)
        #expect(!ConsoleRequest.covers("/consoles") && ConsoleRequest.covers("/console") && ConsoleRequest.covers("/console/x"))
    }
}

extension LedgerFixture {
    /// The files' bytes by name (empty when Console/ cannot be read, which `files()` reports).
    static var consoleFilesOrEmpty: [String: [UInt8]] {
        ((try? consoleFiles())?.files ?? [:]).mapValues(\.bytes)
    }
}
