import Foundation
@testable import LedgerAPI
import LedgerCore
@testable import LedgerService
import Testing

/// API/openapi.json against `Route`: the document is written by hand, so these hold it to
/// the routes the server has, the roles they admit and the errors they can answer.
@Suite("OpenAPI: API/openapi.json documents every route as the server has it")
struct OpenAPIDocumentTests {
    static let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    let document: JSONValue

    init() throws {
        let file = try LedgerFixture.openAPIDocument()
        document = try JSONValue.parse(file.bytes)
    }

    private func documented(_ route: Route) -> JSONValue? {
        document["paths"]?[route.path]?[route.method.lowercased()]
    }

    private func responses(_ route: Route) -> JSONValue? { documented(route)?["responses"] }

    private func roles(_ operation: JSONValue) -> Set<String>? {
        guard let items = operation["x-roles"]?.arrayValue else { return nil }
        return Set(items.compactMap(\.stringValue))
    }

    @Test("it is OpenAPI 3.1")
    func version() {
        #expect(document["openapi"]?.stringValue?.hasPrefix("3.1.") == true, "\(document["openapi"] ?? .null)")
    }

    @Test("every route appears with its method and path, and its x-roles are the route's roles", arguments: Route.allCases)
    func routeIsDocumented(_ route: Route) throws {
        let operation = try #require(documented(route), "no \(route.method) \(route.path) in API/openapi.json")
        let listed = try #require(roles(operation), "\(route.testDescription) has no x-roles array")
        #expect(listed == Set(route.roles.map(\.rawValue)),
                "\(route.testDescription): x-roles \(listed.sorted()), the route admits \(route.roles.map(\.rawValue).sorted())")
    }

    @Test("a route without a token says so (security: []); a role-gated one keeps the bearer scheme", arguments: Route.allCases)
    func security(_ route: Route) throws {
        let operation = try #require(documented(route))
        if route.needsToken {
            #expect(operation["security"]?.arrayValue?.isEmpty != true, "\(route.testDescription) drops the bearer scheme")
        } else {
            #expect(operation["security"]?.arrayValue?.isEmpty == true, "\(route.testDescription) needs no bearer token")
        }
    }

    @Test("every role-gated route documents 401 and 403", arguments: Route.allCases.filter(\.needsToken))
    func gatedRoutesDocumentAuthErrors(_ route: Route) {
        #expect(responses(route)?["401"] != nil, "\(route.testDescription) documents no 401")
        #expect(responses(route)?["403"] != nil, "\(route.testDescription) documents no 403")
    }

    @Test("every route that uses the database documents 503", arguments: Route.allCases.filter(\.usesDatabase))
    func databaseRoutesDocumentUnavailable(_ route: Route) {
        #expect(responses(route)?["503"] != nil, "\(route.testDescription) documents no 503")
    }

    @Test("no documented operation lacks a route")
    func noExtraOperations() throws {
        guard case .object(let paths)? = document["paths"] else { Issue.record("no paths"); return }
        let served = Set(Route.allCases.map { "\($0.method) \($0.path)" })
        for (path, item) in paths {
            guard case .object(let fields) = item else { Issue.record("\(path) is not an object"); continue }
            for (key, _) in fields where Self.methods.contains(key) {
                #expect(served.contains("\(key.uppercased()) \(path)"), "\(key.uppercased()) \(path) is documented but not served")
            }
        }
    }

    @Test("every $ref points inside the document, at something that exists")
    func referencesResolve() {
        var references: [String] = []
        func collect(_ value: JSONValue) {
            switch value {
            case .object(let fields):
                for (key, child) in fields {
                    if key == "$ref", let target = child.stringValue { references.append(target) } else { collect(child) }
                }
            case .array(let items): items.forEach(collect)
            default: break
            }
        }
        collect(document)
        #expect(!references.isEmpty)
        for reference in Set(references).sorted() {
            guard reference.hasPrefix("#/") else { Issue.record("external $ref \(reference)"); continue }
            var node: JSONValue? = document
            for part in reference.dropFirst(2).split(separator: "/", omittingEmptySubsequences: false) {
                node = node?[part.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")]
            }
            #expect(node != nil, "$ref \(reference) points nowhere")
        }
    }

    @Test("operation ids are unique")
    func operationIDsAreUnique() {
        let ids = Route.allCases.compactMap { documented($0)?["operationId"]?.stringValue }
        #expect(ids.count == Route.allCases.count, "a route has no operationId")
        #expect(Set(ids).count == ids.count, "an operationId is used twice: \(ids.sorted())")
    }

    @Test("without its OpenAPI document ledger serve refuses to start: one line, exit 2")
    func serveNeedsTheDocument() throws {
        // Nothing is connected before the document is read, so no database is needed.
        let serve = try ServeProcess(databaseURL: "postgresql://postgres@127.0.0.1:1/ledger",
                                     environment: ["LEDGER_OPENAPI": "/nonexistent/openapi.json"])
        let deadline = Date(timeIntervalSinceNow: 30)
        while !serve.hasExited && Date() < deadline { usleep(20_000) }
        let status = try #require(serve.signal(SIGKILL, waitSeconds: 1), "ledger serve kept running: \(serve.logText)")
        #expect((status >> 8) & 0xff == 2, "exit status \(status): \(serve.logText)")
        let lines = serve.logText.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.contains("/nonexistent/openapi.json") == true, "\(serve.logText)")
    }

    @Test("the document is found as Migrations/ is: LEDGER_OPENAPI first, then ./API/openapi.json")
    func lookup() {
        let configured = try? LedgerConfiguration.fromEnvironment(["DATABASE_URL": "postgresql:///x", "LEDGER_OPENAPI": "/x/openapi.json"])
        #expect(configured?.openAPIPath == "/x/openapi.json")
        #expect(OpenAPIDocument.locate(explicit: configured?.openAPIPath, executablePath: "/nonexistent/ledger") == "/x/openapi.json")
        let found = OpenAPIDocument.locate(explicit: nil, executablePath: "/nonexistent/ledger")
        #expect(found.map { FileManager.default.contentsEqual(atPath: $0, andPath: LedgerFixture.openAPIPath) } == true,
                "\(found ?? "nothing") (the tests run in the package's folder)")
    }
}
