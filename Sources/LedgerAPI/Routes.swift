import LedgerHTTP
import LedgerService

/// Every route of http-api.md. The raw value is the route's low-cardinality name,
/// used as the metrics label (so it must not change); method, path, roles and
/// where the route runs are written here once, and `APIHandler` dispatches on the
/// case with an exhaustive switch, so a route cannot be added without a handler.
/// API/openapi.json documents each case (`OpenAPIDocumentTests` holds them equal).
enum Route: String, CaseIterable, Sendable {
    case webhookWeb3 = "webhook_web3"
    case webhookBanxa = "webhook_banxa"
    case registerOrder = "register_order"
    case listOrders = "list_orders"
    case getOrder = "get_order"
    case orderEvents = "order_events"
    case observeOrder = "observe_order"
    case orderClientEvent = "order_client_event"
    case enrollmentClientEvent = "enrollment_client_event"
    case mintClientToken = "mint_client_token"
    /// Beyond http-api.md (docs/decisions.md): a client token for one enrollment.
    case mintEnrollmentClientToken = "mint_enrollment_client_token"
    case correctOrder = "correct_order"
    case ledgerHead = "ledger_head"
    case ledgerCheckpoints = "ledger_checkpoints"
    case quarantineList = "quarantine_list"
    case quarantineDelivery = "quarantine_delivery"
    case exportOrders = "export_orders"
    case exportEvents = "export_events"
    /// The companion routes of the exports: their manifests, signed when a key is set (docs/auditing.md, *Signed exports*).
    case exportOrdersManifest = "export_orders_manifest"
    case exportEventsManifest = "export_events_manifest"
    case healthz
    case readyz
    case metrics
    case openapi

    var method: String {
        switch self {
        case .webhookWeb3, .webhookBanxa, .registerOrder, .observeOrder, .orderClientEvent, .enrollmentClientEvent,
             .mintClientToken, .mintEnrollmentClientToken, .correctOrder:
            "POST"
        case .listOrders, .getOrder, .orderEvents, .ledgerHead, .ledgerCheckpoints, .quarantineList, .quarantineDelivery,
             .exportOrders, .exportEvents, .exportOrdersManifest, .exportEventsManifest, .healthz, .readyz, .metrics, .openapi:
            "GET"
        }
    }

    var path: String {
        switch self {
        case .webhookWeb3: "/v1/webhooks/web3"
        case .webhookBanxa: "/v1/webhooks/banxa"
        case .registerOrder, .listOrders: "/v1/orders"
        case .getOrder: "/v1/orders/{no}"
        case .orderEvents: "/v1/orders/{no}/events"
        case .observeOrder: "/v1/orders/{no}/observations"
        case .orderClientEvent: "/v1/orders/{no}/client-events"
        case .enrollmentClientEvent: "/v1/enrollments/{ref}/client-events"
        case .mintClientToken: "/v1/orders/{no}/client-tokens"
        case .mintEnrollmentClientToken: "/v1/enrollments/{ref}/client-tokens"
        case .correctOrder: "/v1/orders/{no}/corrections"
        case .ledgerHead: "/v1/ledger/head"
        case .ledgerCheckpoints: "/v1/ledger/checkpoints"
        case .quarantineList: "/v1/quarantine"
        case .quarantineDelivery: "/v1/quarantine/{id}"
        case .exportOrders: "/v1/exports/orders"
        case .exportEvents: "/v1/exports/events"
        case .exportOrdersManifest: "/v1/exports/orders/manifest"
        case .exportEventsManifest: "/v1/exports/events/manifest"
        case .healthz: "/healthz"
        case .readyz: "/readyz"
        case .metrics: "/metrics"
        case .openapi: "/openapi.json"
        }
    }

    /// The roles whose bearer token may call the route (http-api.md, *Who may call what*).
    /// Empty: the route takes no bearer token, being public (the operations endpoints)
    /// or authenticated by a provider signature (the webhooks).
    var roles: Set<Role> {
        switch self {
        case .webhookWeb3, .webhookBanxa, .healthz, .readyz, .metrics, .openapi: []
        case .registerOrder, .observeOrder, .mintClientToken, .mintEnrollmentClientToken: [.ingest]
        case .listOrders, .orderEvents: [.support, .auditor]
        case .getOrder: [.support, .auditor, .ingest]
        case .orderClientEvent, .enrollmentClientEvent: [.ingest, .client]
        case .correctOrder, .ledgerHead, .ledgerCheckpoints, .quarantineList, .quarantineDelivery: [.auditor]
        case .exportOrders, .exportEvents, .exportOrdersManifest, .exportEventsManifest: [.accountant, .auditor]
        }
    }

    /// Whether the route needs a bearer token at all.
    var needsToken: Bool { !roles.isEmpty }

    /// Quick, bounded reads that run on the HTTP polling thread itself (docs/http.md,
    /// *How requests run*); the rest run on workers.
    var inline: Bool {
        switch self {
        case .listOrders, .getOrder, .orderEvents, .ledgerHead, .ledgerCheckpoints, .quarantineList, .quarantineDelivery,
             .healthz, .metrics, .openapi:
            true
        case .webhookWeb3, .webhookBanxa, .registerOrder, .observeOrder, .orderClientEvent, .enrollmentClientEvent,
             .mintClientToken, .mintEnrollmentClientToken, .correctOrder, .exportOrders, .exportEvents,
             .exportOrdersManifest, .exportEventsManifest, .readyz:
            false
        }
    }

    /// Whether answering reads or writes PostgreSQL (a token lookup counts), so that an
    /// unreachable database makes it 503 with Retry-After.
    var usesDatabase: Bool {
        switch self {
        case .healthz, .metrics, .openapi: false
        case .webhookWeb3, .webhookBanxa, .registerOrder, .listOrders, .getOrder, .orderEvents, .observeOrder,
             .orderClientEvent, .enrollmentClientEvent, .mintClientToken, .mintEnrollmentClientToken, .correctOrder,
             .ledgerHead, .ledgerCheckpoints, .quarantineList, .quarantineDelivery, .exportOrders, .exportEvents,
             .exportOrdersManifest, .exportEventsManifest, .readyz:
            true
        }
    }

    /// The table the HTTP layer matches requests against; it names each route by its raw value.
    static var router: Router {
        var router = Router()
        for route in allCases { router.add(route.method, route.path, name: route.rawValue) }
        return router
    }
}

extension Route {
    /// What a request resolves to: a route with its path parameters, or the 404/405 problem to answer.
    enum Resolution {
        case route(Route, parameters: [String: String])
        case refused(HTTPResponse)
    }

    static func resolve(_ request: HTTPRequest, in router: Router) -> Resolution {
        switch router.resolve(request) {
        case .failure(let failure):
            return .refused(failure.response)
        case .success(let match):
            // The table holds only `Route.router`'s names, so every match is a case.
            guard let route = Route(rawValue: match.name) else {
                return .refused(.problem(status: 404, title: "Not Found", detail: "No route matches this path."))
            }
            return .route(route, parameters: match.parameters)
        }
    }

    /// The route a method and path match, with its path parameters; nil when none does.
    static func match(method: String, path: String, in router: Router) -> (route: Route, parameters: [String: String])? {
        guard case .found(let name, let parameters) = router.match(method: method, path: path),
              let route = Route(rawValue: name) else { return nil }
        return (route, parameters)
    }
}
