import Foundation
import LedgerCore
@testable import LedgerAPI
import LedgerPostgres
@testable import LedgerService
import LedgerTestSupport
import Testing

/// issue 4, Roles and tokens: a revoked token stops working at once. Lookups are
/// cached for a few seconds, and every change to ledger.tokens notifies the running
/// services (Migration 025), which forget what they cached.
@Suite("Token revocation takes effect at once")
final class TokenRevocationTests {
    let ledger: LedgerFixture
    static let order = "TR-1"

    init() throws {
        ledger = try .start("revocation")
        let registered = try ledger.register(Self.order)
        guard registered.status == 201 else { throw ClientError.malformed("could not register \(Self.order): \(registered)") }
    }
    deinit { ledger.stop() }

    /// Uses `token` (so its lookup is cached), revokes it in another session, and answers
    /// how long the service went on accepting it (nil: still accepted after `within` seconds).
    private func secondsUntilRefused(name: String, token: String, within: Double = 2) throws -> Double? {
        #expect(try ledger.order(Self.order, token: token).status == 200)
        #expect(try ledger.order(Self.order, token: token).status == 200)   // served from the cache
        try ledger.revoke(name)
        let revoked = Date()
        let refused = eventually(within: within, every: 0.02) { try ledger.order(Self.order, token: token).status == 401 }
        return refused ? Date().timeIntervalSince(revoked) : nil
    }

    @Test("a token revoked after use is refused within a second, not when its cached lookup lapses (5 s)")
    func revocationAfterUse() throws {
        #expect(ledger.app.runtime.tokenChanges.isListening)
        let (name, token) = try ledger.namedToken(.support)
        let seconds = try secondsUntilRefused(name: name, token: token, within: 1)
        #expect(seconds != nil, "a revoked token still works a second later")
    }

    @Test("without a listener (its connection down), a revoked token's cached lookup lapses after cacheSeconds, and a forgetAll drops it at once")
    func cachedLookupsLapseOrAreForgotten() throws {
        let pool = ConnectionPool(configuration: DatabaseConfiguration(connectionString: ledger.databaseURL, poolSize: 1))
        defer { pool.close() }
        let authenticator = Authenticator(pool: pool, cacheSeconds: 1)   // no listener forgets for it
        func accepted(_ token: String) -> Bool {
            (try? authenticator.principal(authorization: "Bearer " + token, now: .now())) != nil
        }
        let (first, firstToken) = try ledger.namedToken(.support)
        #expect(accepted(firstToken))
        try ledger.revoke(first)
        #expect(accepted(firstToken), "the cached lookup answers until it lapses")
        let lapsed = Date()
        #expect(eventually(within: 3, every: 0.05) { !accepted(firstToken) }, "a revoked token outlived the cache")
        #expect(Date().timeIntervalSince(lapsed) < 2)

        let (second, secondToken) = try ledger.namedToken(.auditor)
        #expect(accepted(secondToken))
        try ledger.revoke(second)
        #expect(accepted(secondToken))
        authenticator.forgetAll()
        #expect(!accepted(secondToken), "forgetAll must drop the cached lookup")
    }

    @Test("when its listening connection is killed the service listens again, and revocations are again heard at once")
    func listenerReconnects() throws {
        #expect(ledger.app.runtime.tokenChanges.isListening)
        let c = try PostgresConnection(connectionString: ledger.databaseURL)
        defer { c.close() }
        let killed = try c.query("""
            SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
             WHERE datname = current_database() AND query = 'LISTEN ledger_token_changes' AND pid <> pg_backend_pid()
            """)
        #expect(killed.count == 1, "one listening session, found \(killed.count)")
        #expect(eventually(within: 3, every: 0.005) { !self.ledger.app.runtime.tokenChanges.isListening }, "the kill went unnoticed")
        #expect(eventually(within: 5, every: 0.05) { self.ledger.app.runtime.tokenChanges.isListening }, "it never listened again")
        let (name, token) = try ledger.namedToken(.auditor)
        let seconds = try secondsUntilRefused(name: name, token: token, within: 1)
        #expect(seconds != nil, "after the reconnect a revoked token still works a second later")
    }
}
