@testable import LedgerAPI
@testable import LedgerService
import Testing

@Suite("Route: the names are the metrics labels, and every route is reachable by its method and path")
struct RouteEnumTests {
    /// `ledger_http_*` series are labelled with these: renaming one breaks dashboards and alerts.
    static let metricsLabels = [
        "webhook_web3", "webhook_banxa", "register_order", "list_orders", "get_order", "order_events", "observe_order",
        "order_client_event", "enrollment_client_event", "mint_client_token", "mint_enrollment_client_token",
        "correct_order", "ledger_head", "ledger_checkpoints", "quarantine_list", "quarantine_delivery", "export_orders", "export_events", "export_orders_manifest", "export_events_manifest", "healthz", "readyz", "metrics", "openapi",
    ]

    @Test("the raw values are the metrics labels, unchanged")
    func labels() {
        #expect(Route.allCases.map(\.rawValue) == Self.metricsLabels)
    }

    @Test("the router places each route's own method and path on that route", arguments: Route.allCases)
    func routerPlacesEveryRoute(_ route: Route) {
        let path = route.path.replacingOccurrences(of: "{no}", with: "ORD-1").replacingOccurrences(of: "{ref}", with: "ENR-1")
            .replacingOccurrences(of: "{id}", with: "1")
        #expect(Route.match(method: route.method, path: path, in: Route.router)?.route == route)
    }

    @Test("a failed readiness check answers 503 without its details (a SQLSTATE, a migration's path): those go to the log")
    func readinessKeepsDetailsToTheLog() {
        let response = APIHandler.readiness(.checkFailed("MigrationError.directoryUnreadable(/etc/ledger/secret-path/001.sql)"))
        #expect(response.status == 503)
        let body = String(decoding: response.bodyBytes ?? [], as: UTF8.self)
        #expect(!body.contains("secret-path") && body.contains("the service's log names why"), "\(body)")
    }
}
