import LedgerHTTP
import LedgerService

/// Every route of http-api.md: method, path, a low-cardinality name (used as
/// the metrics label) and the roles that may call it. `nil` roles: public
/// (operations endpoints) or authenticated by a provider signature (webhooks).
/// `inline` routes are quick, bounded reads that run on the HTTP polling
/// thread itself (see README, *Reads run inline*); the rest run on workers.
struct RouteSpec: Sendable {
    let method: String
    let path: String
    let name: String
    let roles: Set<Role>?
    var inline = false
}

enum Routes {
    static let readers: Set<Role> = [.support, .auditor]
    static let all: [RouteSpec] = [
        RouteSpec(method: "POST", path: "/v1/webhooks/web3", name: "webhook_web3", roles: nil),
        RouteSpec(method: "POST", path: "/v1/webhooks/banxa", name: "webhook_banxa", roles: nil),
        RouteSpec(method: "POST", path: "/v1/orders", name: "register_order", roles: [.ingest]),
        RouteSpec(method: "GET", path: "/v1/orders", name: "list_orders", roles: readers, inline: true),
        RouteSpec(method: "GET", path: "/v1/orders/{no}", name: "get_order", roles: [.support, .auditor, .ingest], inline: true),
        RouteSpec(method: "GET", path: "/v1/orders/{no}/events", name: "order_events", roles: readers, inline: true),
        RouteSpec(method: "POST", path: "/v1/orders/{no}/observations", name: "observe_order", roles: [.ingest]),
        RouteSpec(method: "POST", path: "/v1/orders/{no}/client-events", name: "order_client_event", roles: [.ingest, .client]),
        RouteSpec(method: "POST", path: "/v1/enrollments/{ref}/client-events", name: "enrollment_client_event", roles: [.ingest, .client]),
        RouteSpec(method: "POST", path: "/v1/orders/{no}/client-tokens", name: "mint_client_token", roles: [.ingest]),
        // Beyond http-api.md (docs/decisions.md): a client token for one enrollment.
        RouteSpec(method: "POST", path: "/v1/enrollments/{ref}/client-tokens", name: "mint_enrollment_client_token", roles: [.ingest]),
        RouteSpec(method: "POST", path: "/v1/orders/{no}/corrections", name: "correct_order", roles: [.auditor]),
        RouteSpec(method: "GET", path: "/v1/ledger/head", name: "ledger_head", roles: [.auditor], inline: true),
        RouteSpec(method: "GET", path: "/v1/exports/orders", name: "export_orders", roles: [.accountant, .auditor]),
        RouteSpec(method: "GET", path: "/v1/exports/events", name: "export_events", roles: [.accountant, .auditor]),
        RouteSpec(method: "GET", path: "/healthz", name: "healthz", roles: nil, inline: true),
        RouteSpec(method: "GET", path: "/readyz", name: "readyz", roles: nil),
        RouteSpec(method: "GET", path: "/metrics", name: "metrics", roles: nil, inline: true),
        RouteSpec(method: "GET", path: "/openapi.json", name: "openapi", roles: nil, inline: true),
    ]

    static let byName: [String: RouteSpec] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// Route names that run on the polling thread.
    static let inlineNames: Set<String> = Set(all.filter(\.inline).map(\.name))

    static var router: Router {
        var router = Router()
        for r in all { router.add(r.method, r.path, name: r.name) }
        return router
    }
}
