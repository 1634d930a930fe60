import Foundation
import LedgerCore
import LedgerHTTP
import LedgerObservability
import LedgerPostgres
import LedgerService

/// The request handler: route, authenticate, authorize, run the use case,
/// and turn any error into a problem response. Pure routing lives in
/// `Routes`; the use cases know nothing of HTTP status codes except through
/// `ServiceError`.
struct APIHandler: Sendable {
    let router: Router
    /// The bytes of API/openapi.json, read once at start and served as they are.
    let openAPIDocument: OpenAPIDocument
    /// The support console's files, answered under /console (not an API route: no token, no JSON).
    let console: ConsoleResponder
    let authenticator: Authenticator
    let ingestion: Ingestion
    let queries: OrderQueries
    /// The signed notes, read through the same pool as the other inline reads.
    var checkpoints: CheckpointQueries { CheckpointQueries(pool: queries.pool, publicKey: exports.signer?.key.publicKey) }
    /// The rejected deliveries, read through the same pool.
    var quarantine: QuarantineQueries { QuarantineQueries(pool: queries.pool) }
    /// Where GET /v1/orders/{no} (without asOf) reads its document.
    let documents: DocumentBatcher
    let operations: Operations
    let metrics: MetricsRegistry
    let exports: ExportResponses
    let logger: Logger
    let clock: @Sendable () -> Timestamp

    /// True for requests of quick read routes, and for requests no route matches (answered at
    /// once): the server runs these on its polling thread.
    func runsInline(_ request: HTTPRequest) -> Bool {
        if ConsoleRequest.covers(request.path) { return true }   // answered from memory
        guard let (route, _) = Route.match(method: request.method, path: request.path, in: router) else { return true }
        if Self.readsBatched(route, request) { return false }   // deferred: see startDeferred
        return route.inline
    }

    /// GET /v1/orders/{no} without asOf: its document comes from the DocumentBatcher.
    private static func readsBatched(_ route: Route, _ request: HTTPRequest) -> Bool {
        route == .getOrder && request.query["asOf"] == nil
    }

    /// Signed web3 webhooks that verify wait for their commit without a thread: the
    /// polling thread verifies and queues the event, and the commit's answer resumes the
    /// connection. Everything else, including a delivery that fails verification (it is
    /// quarantined, which blocks), goes to `handle` on a worker.
    func startDeferred(_ request: HTTPRequest, _ responder: Responder) -> DeferredStart {
        guard let (route, parameters) = Route.match(method: request.method, path: request.path, in: router) else {
            return .declined
        }
        if Self.readsBatched(route, request) {
            startBatchedRead(request, parameters, responder)
            return .pending
        }
        // Large bodies are verified on a worker: HMAC and parsing a big body would hold up
        // the other connections of this polling thread.
        guard route == .webhookWeb3, request.body.count <= Self.deferredBodyLimit else { return .declined }
        let submitted = ingestion.submitWeb3Webhook(request.delivery, now: clock()) { [self] result in
            switch result {
            case .success(let written):
                responder.respond(Self.ack(written))
            case .failure(let error):
                responder.respond(problem(error, route, request))
            }
        }
        guard submitted else { return .declined }
        // As the blocking path's append timeout: past it the sender gets 503 and retries
        // (a retry of a commit that did happen answers duplicate), well inside the request
        // timeout and the providers' callback timeouts. The first answer wins.
        responder.expire(after: Ingestion.commitWaitSeconds) {
            ServiceError.unavailable("no commit within \(Int(Ingestion.commitWaitSeconds)) s; retry shortly").response
        }
        return .pending
    }

    /// Webhook bodies up to this size are verified on the polling thread (deferred path).
    static let deferredBodyLimit = 64 * 1024

    /// GET /v1/orders/{no}: authorizes here (the token cache makes that quick), then
    /// queues the read; the batch's answer resumes the connection.
    private func startBatchedRead(_ request: HTTPRequest, _ parameters: [String: String], _ responder: Responder) {
        let route = Route.getOrder
        do {
            let principal = try authorize(route, request, now: clock())
            let no = try MerchantOrderNo(parameters["no"] ?? "")
            try checkScope(principal, no)
            let masked = principal?.role != .auditor
            documents.read(no, masked: masked) { [self] result in
                switch result {
                case .success(.body(let body)):
                    responder.respond(.json(200, body))
                case .success(.missing):
                    responder.respond(ServiceError.notFound("no order \(no.value)").response)
                case .success(.stale):   // the batcher derives stale documents itself
                    responder.respond(ServiceError.internalError("a stale document reached the reader").response)
                case .failure(let error):
                    responder.respond(problem(error, route, request))
                }
            }
        } catch {
            responder.respond(problem(error, route, request))
        }
    }

    /// The problem response for `error`; server-side failures are logged.
    private func problem(_ error: Error, _ route: Route, _ request: HTTPRequest) -> HTTPResponse {
        let problem = ServiceError.from(error)
        if problem.status >= 500 {
            logger.error("request failed", [("requestId", .string(request.requestID)), ("route", .string(route.rawValue)),
                                            ("error", .string(String(describing: error)))])
        }
        return problem.response
    }

    /// The caller's principal if the route takes a token (nil for routes without roles);
    /// 401 without a valid token, 403 for a role the route does not admit.
    private func authorize(_ route: Route, _ request: HTTPRequest, now: Timestamp) throws -> Principal? {
        guard route.needsToken else { return nil }
        let p = try authenticator.principal(authorization: request.header("authorization"), now: now)
        guard route.roles.contains(p.role) else {
            throw ServiceError.forbidden("a \(p.role.rawValue) token may not call \(route.method) \(route.path)")
        }
        return p
    }

    /// A client token reaches its own order only.
    private func checkScope(_ principal: Principal?, _ no: MerchantOrderNo) throws {
        if let p = principal, p.role == .client, p.scope != .order(no.value) {
            throw ServiceError.forbidden("this client token is scoped to another order or to an enrollment")
        }
    }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        if ConsoleRequest.covers(request.path) { return console.respond(method: request.method, path: request.path) }
        switch Route.resolve(request, in: router) {
        case .refused(let response):
            return response
        case .route(let route, let parameters):
            do {
                return try dispatch(route, parameters, request)
            } catch {
                return problem(error, route, request)
            }
        }
    }

    private func dispatch(_ route: Route, _ parameters: [String: String], _ request: HTTPRequest) throws -> HTTPResponse {
        let now = clock()
        let principal = try authorize(route, request, now: now)
        func orderNo() throws -> MerchantOrderNo {
            let no = try MerchantOrderNo(parameters["no"] ?? "")
            try checkScope(principal, no)
            return no
        }
        /// The `{ref}` of an enrollment route; a client token must be scoped to it.
        func enrollmentRef() throws -> String {
            let ref = parameters["ref"] ?? ""
            guard MerchantOrderNo.isValid(ref) else {
                throw ServiceError.badRequest("an enrollment reference is 1-64 characters of A-Z a-z 0-9 . _ : -, and neither . nor ..")
            }
            if let p = principal, p.role == .client, p.scope != .enrollment(ref) {
                throw ServiceError.forbidden("this client token is not scoped to enrollment \(ref): mint one with POST /v1/enrollments/\(ref)/client-tokens")
            }
            return ref
        }
        // Emails are masked for everyone but auditors.
        let masked = principal?.role != .auditor

        switch route {
        case .webhookWeb3:
            return Self.ack(try ingestion.web3Webhook(request.delivery, now: now))
        case .webhookBanxa:
            return Self.ack(try ingestion.banxaWebhook(request.delivery, now: now))
        case .registerOrder:
            let (created, order) = try ingestion.register(request.delivery, principal: principal!, now: now)
            return json(created ? 201 : 200, Self.flagged(order, duplicate: !created), masked: masked)
        case .getOrder:
            let no = try orderNo()
            if let asOf = request.query["asOf"] {
                return json(200, try queries.order(no, asOf: try TimeQuery.parse(asOf, name: "asOf")), masked: masked)
            }
            return .json(200, try queries.orderDocument(no, masked: masked))
        case .orderEvents:
            return json(200, try queries.timeline(try orderNo(), includeRaw: !masked), masked: masked)
        case .listOrders:
            return .json(200, try queries.list(try OrderFilterParser.parse(request), masked: masked))
        case .observeOrder:
            return write(try ingestion.observe(try orderNo(), request.delivery, principal: principal!, now: now), order: try orderNo(), masked: masked)
        case .orderClientEvent:
            return write(try ingestion.clientEvent(try orderNo(), request.delivery, principal: principal!, now: now), order: nil, masked: masked)
        case .enrollmentClientEvent:
            return write(try ingestion.enrollmentEvent(try enrollmentRef(), request.delivery, principal: principal!, now: now), order: nil, masked: masked)
        case .mintClientToken:
            return json(201, try operations.mintClientToken(.order(try orderNo().value), body: request.body, now: now), masked: false)
        case .mintEnrollmentClientToken:
            return json(201, try operations.mintClientToken(.enrollment(try enrollmentRef()), body: request.body, now: now), masked: false)
        case .correctOrder:
            let no = try orderNo()
            return write(try ingestion.correct(no, request.delivery, principal: principal!, now: now), order: no, masked: masked)
        case .ledgerHead:
            return json(200, try queries.head(checkpoints: checkpoints), masked: false)
        case .ledgerCheckpoints:
            let page = try CheckpointQueries.page(after: request.query["after"], limit: request.query["limit"])
            return json(200, try checkpoints.list(after: page.after, limit: page.limit), masked: false)
        case .quarantineList:
            let page = try QuarantineQueries.page(before: request.query["before"], limit: request.query["limit"])
            return json(200, try quarantine.list(before: page.before, limit: page.limit), masked: false)
        case .quarantineDelivery:
            return json(200, try quarantine.delivery(try QuarantineQueries.id(parameters["id"] ?? "")), masked: false)
        case .exportOrders:
            return try exports.response(.orders, query: ExportResponses.query(of: request))
        case .exportEvents:
            return try exports.response(.events, query: ExportResponses.query(of: request))
        case .exportOrdersManifest:
            return try exports.manifest(.orders, query: ExportResponses.query(of: request))
        case .exportEventsManifest:
            return try exports.manifest(.events, query: ExportResponses.query(of: request))
        case .healthz:
            return .json(200, Array(#"{"status":"ok"}"#.utf8))
        case .readyz:
            let readiness = operations.readiness()
            if case .checkFailed(let why) = readiness {
                // The details (SQLSTATE, a migration's name or path) go to the log, not to an unauthenticated caller.
                logger.error("readiness check failed", [("requestId", .string(request.requestID)), ("error", .string(why))])
            }
            return Self.readiness(readiness)
        case .metrics:
            return .text(200, metrics.render(), contentType: MetricsRegistry.contentType)
        case .openapi:
            return .json(200, openAPIDocument.bytes)
        }
    }

    /// 200 when the database answers and every migration is applied; 503 otherwise.
    static func readiness(_ readiness: Readiness) -> HTTPResponse {
        switch readiness {
        case .ready:
            return .json(200, Array(#"{"status":"ready"}"#.utf8))
        case .migrationsPending(let count):
            return .problem(status: 503, title: "Service Unavailable", detail: "\(count) migration(s) pending: run ledger migrate",
                            headers: [("Retry-After", "5")])
        case .databaseUnreachable:
            return .problem(status: 503, title: "Service Unavailable", detail: "the database cannot be reached", headers: [("Retry-After", "2")])
        case .checkFailed:
            return .problem(status: 503, title: "Service Unavailable",
                            detail: "the readiness check failed; the service's log names why", headers: [("Retry-After", "2")])
        }
    }

    private static func ack(_ result: WriteResult) -> HTTPResponse {
        .json(200, JSONSerializer.bytes(.object([("code", .integer(0)), ("eventId", .string(result.eventID)),
                                                 ("position", .integer(result.position)),
                                                 ("duplicate", .bool(result.duplicate))])))
    }

    private func write(_ result: WriteResult, order: MerchantOrderNo?, masked: Bool) -> HTTPResponse {
        var fields: [(String, JSONValue)] = [("eventId", .string(result.eventID)), ("position", .integer(result.position)),
                                             ("duplicate", .bool(result.duplicate))]
        if let order, let state = try? ingestion.orderJSON(order) { fields.append(("order", state)) }
        return json(result.duplicate ? 200 : 201, .object(fields), masked: masked)
    }

    /// The order with the `duplicate` flag every write answers with (http-api.md, *Durability*).
    static func flagged(_ order: JSONValue, duplicate: Bool) -> JSONValue {
        guard case .object(var fields) = order else { return order }
        fields.append(("duplicate", .bool(duplicate)))
        return .object(fields)
    }

    private func json(_ status: Int, _ value: JSONValue, masked: Bool) -> HTTPResponse {
        let bytes = JSONSerializer.bytes(value)
        // Masking walks every string; a document without "@" or "%40" has nothing to mask.
        guard masked, OrderDocuments.mayHoldEmail(bytes) else { return .json(status, bytes) }
        return .json(status, JSONSerializer.bytes(EmailMasking.mask(value)))
    }
}
