import Foundation
@testable import LedgerAPI
import LedgerCore
@testable import LedgerService
import LedgerTestSupport
import Testing

extension Route: CustomTestStringConvertible {
    public var testDescription: String { "\(method) \(path)" }
}

/// The spec's table of who may call what, checked for every route that needs a token.
@Suite("Roles: every token-protected route refuses the wrong callers and admits the right ones")
final class RoleMatrixTests {
    let ledger: LedgerFixture
    static let order = "RM-1"
    static let protectedRoutes = Route.allCases.filter(\.needsToken)

    init() throws {
        ledger = try .start("roles")
        let registered = try ledger.register(Self.order)
        guard registered.status == 201 else { throw ClientError.malformed("could not register \(Self.order): \(registered)") }
    }
    deinit { ledger.stop() }

    private func call(_ route: Route, authorization: String?) throws -> Reply {
        let target = route.path.replacingOccurrences(of: "{no}", with: Self.order).replacingOccurrences(of: "{ref}", with: Self.order)
            .replacingOccurrences(of: "{id}", with: "1")
        let headers = authorization.map { [("Authorization", $0)] } ?? []
        if route.method == "POST" {
            return try ledger.client.post(target, json: "{}", headers: headers)
        }
        return try ledger.client.send(route.method, target, headers: headers)
    }

    /// A client token scoped to what the route names: the order, or the enrollment.
    static func scope(_ route: Route) -> (orderNo: String?, enrollmentRef: String?) {
        route.path.contains("{ref}") ? (nil, order) : (order, nil)
    }

    @Test("a missing, malformed, unknown, expired or revoked token is 401 with a problem", arguments: protectedRoutes)
    func unauthenticated(_ route: Route) throws {
        let allowed = try #require(route.roles.sorted { $0.rawValue < $1.rawValue }.first)
        let (orderNo, ref) = allowed == .client ? Self.scope(route) : (nil, nil)
        let expired = try ledger.token(allowed, orderNo: orderNo, enrollmentRef: ref,
                                       expiresAt: Timestamp(seconds: Timestamp.now().seconds - 60))
        let revoked = try ledger.namedToken(allowed, orderNo: orderNo, enrollmentRef: ref)
        try ledger.revoke(revoked.name)   // before its first use: lookups are cached for a few seconds
        let cases: [(String, String?)] = [
            ("no token", nil),
            ("another scheme", "Basic " + Data("support:secret".utf8).base64EncodedString()),
            ("a malformed token", "Bearer not-a-ledger-token"),
            ("an unknown token", "Bearer lgr_" + String(repeating: "0", count: 64)),
            ("an expired \(allowed) token", "Bearer " + expired),
            ("a revoked \(allowed) token", "Bearer " + revoked.token),
        ]
        for (what, authorization) in cases {
            let reply = try call(route, authorization: authorization)
            #expect(reply.status == 401, "\(route.testDescription) with \(what): \(reply)")
            #expect(reply.isProblem, "\(route.testDescription) with \(what): \(reply)")
        }
    }

    @Test("every role the table does not list is 403 with a problem; every role it lists gets past authorization",
          arguments: protectedRoutes)
    func authorization(_ route: Route) throws {
        let roles = route.roles
        for role in Role.allCases {
            let token = role == .auditor ? ledger.auditor : role == .support ? ledger.support : role == .ingest ? ledger.ingest
                : role == .accountant ? ledger.accountant
                : try ledger.token(.client, orderNo: Self.scope(route).orderNo, enrollmentRef: Self.scope(route).enrollmentRef)
            let reply = try call(route, authorization: "Bearer " + token)
            if roles.contains(role) {
                #expect(reply.status != 401 && reply.status != 403, "\(role) may call \(route.testDescription): \(reply)")
            } else {
                #expect(reply.status == 403, "\(role) may not call \(route.testDescription): \(reply)")
                #expect(reply.isProblem, "\(route.testDescription) as \(role): \(reply)")
            }
        }
    }

    @Test("the Bearer scheme name is case-insensitive (RFC 9110 §11.1), so a client sending 'bearer' is let in")
    func schemeIsCaseInsensitive() throws {
        for scheme in ["bearer", "BEARER"] {
            let reply = try ledger.client.get("/v1/orders/\(Self.order)", headers: [("Authorization", "\(scheme) \(ledger.support)")])
            #expect(reply.status == 200, "\(scheme): \(reply)")
        }
    }

    /// The table above reads the roles from `Route`; this copy of http-api.md's
    /// table, written out by hand, keeps the routes from drifting away from the spec.
    static let specTable: [String: Set<Role>] = [
        "POST /v1/webhooks/web3": [], "POST /v1/webhooks/banxa": [],
        "POST /v1/orders": [.ingest],
        "GET /v1/orders": [.support, .auditor],
        "GET /v1/orders/{no}": [.support, .auditor, .ingest],
        "GET /v1/orders/{no}/events": [.support, .auditor],
        "POST /v1/orders/{no}/observations": [.ingest],
        "POST /v1/orders/{no}/client-events": [.ingest, .client],
        "POST /v1/enrollments/{ref}/client-events": [.ingest, .client],
        "POST /v1/orders/{no}/client-tokens": [.ingest],
        // Not in http-api.md's table: the enrollment-scoped client tokens of docs/decisions.md.
        "POST /v1/enrollments/{ref}/client-tokens": [.ingest],
        "POST /v1/orders/{no}/corrections": [.auditor],
        "GET /v1/ledger/head": [.auditor],
        "GET /v1/ledger/checkpoints": [.auditor],
        "GET /v1/quarantine": [.auditor], "GET /v1/quarantine/{id}": [.auditor],
        "GET /v1/exports/orders": [.accountant, .auditor], "GET /v1/exports/events": [.accountant, .auditor],
        "GET /v1/exports/orders/manifest": [.accountant, .auditor], "GET /v1/exports/events/manifest": [.accountant, .auditor],
        "GET /healthz": [], "GET /readyz": [], "GET /metrics": [], "GET /openapi.json": [],
    ]

    @Test("the routes and the roles that may call them are http-api.md's table (no token: webhooks and operations)")
    func routesAreTheSpecTable() {
        var served = [String: Set<Role>]()
        for route in Route.allCases { served["\(route.method) \(route.path)"] = route.roles }
        #expect(served.count == Route.allCases.count, "a route is listed twice")
        for (route, roles) in Self.specTable.sorted(by: { $0.key < $1.key }) {
            #expect(served[route] == roles, "\(route): the spec gives \(roles.map(\.rawValue).sorted()), served \(served[route].map { $0.map(\.rawValue).sorted() } ?? ["nothing"])")
        }
        #expect(Set(served.keys).subtracting(Self.specTable.keys).isEmpty,
                "routes the spec does not have: \(Set(served.keys).subtracting(Self.specTable.keys).sorted())")
    }

    @Test("the four operations endpoints need no token")
    func operationsArePublic() throws {
        for path in ["/healthz", "/readyz", "/metrics", "/openapi.json"] {
            let reply = try ledger.client.get(path)
            #expect(reply.status == 200, "\(path): \(reply)")
        }
    }
}
