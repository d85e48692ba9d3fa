import AccountSync
import Foundation
import Logging
import ServerDatabase
import ServerKit
import ServerTokens
import TestThreads
import Testing

@testable import ServerControlPlane

/// What a sign-in to the dashboard may do (`SignIns`, which the dashboard's sign-in pages call), in
/// process over a fresh migrated PostgreSQL: the sessions, audit rows and limits themselves, with
/// no page, cookie or server process between. (DashboardTests, ControlPlaneTests and
/// IdentityProviderTests send the same sign-ins through the real server and a browser's forms.)
@Suite("Signing in to the dashboard", .ownThread)
struct SignInsTests {
    struct World {
        let signIns: SignIns
        let people: PeopleStore
        let audit: AuditLog
        let signer: TokenSigner
        let limiter: RateLimiter

        /// The signed credential of a new person holding `role` in `app` (nil: the person removed
        /// since, with their only role).
        func credential(of name: String, role: Role?, in app: String = "growth") async throws -> String {
            let actor = Actor(name: "operator", source: "test", person: nil)
            let now = Date().timeIntervalSince1970
            let (_, issued) = try await people.grant(
                role ?? .viewer, in: .app(app), to: name, identity: "\(name)@example.com", days: 1, by: actor,
                now: now)
            if role == nil { _ = try await people.remove(name, from: .app(app), by: actor, now: now) }
            return await signer.sign(try #require(issued).claims)
        }

        /// The audit trail's actions, oldest first, with who they name.
        func actions() async throws -> [String] {
            try await audit.list(.init()).reversed().map { "\($0.action) \($0.actor)" }
        }
    }

    /// `body` with sign-ins over a fresh database; failures limited after `burst` from a source.
    func with(burst: Double = 20, _ body: @escaping @Sendable (World) async throws -> Void) async throws {
        try await TestPostgres.withMigratedClient(maximumConnections: 4) { client, logger in
            let signer = try TokenSigner(secret: ServerProcess.secret)
            let writes = WritableDatabase(client: client, logger: logger, bounds: .patient)
            let reads = ReadOnlyDatabase(sharing: client, logger: logger)
            let limiter = RateLimiter(
                limits: .init(sourceBurst: burst, sourceRefill: 600, personBurst: 100, personRefill: 600))
            let controlPlane = ControlPlane(
                writes: writes, reads: reads, tokens: signer, limiter: limiter,
                clients: ClientAddress(trustedProxies: [], logger: logger), logger: logger)
            let sessions = DashboardSessions(writes: writes, reads: reads, logger: logger)
            let signIns = SignIns(
                controlPlane: controlPlane, people: controlPlane.people, sessions: sessions,
                auditTrail: controlPlane.audit, provider: nil, logger: logger)
            try await body(
                World(
                    signIns: signIns, people: controlPlane.people, audit: controlPlane.audit, signer: signer,
                    limiter: limiter))
        }
    }

    /// The refusal `body` throws.
    func refusal(_ body: () async throws -> Void) async -> SignIns.Refusal? {
        do {
            try await body()
            return nil
        } catch {
            return error as? SignIns.Refusal
        }
    }

    @Test func aLiveCredentialOpensASessionOfItsPersonUntilSignOut() async throws {
        try await with { world in
            let credential = try await world.credential(of: "ann", role: .viewer)
            let session = try await world.signIns.withCredential(
                credential, source: "198.51.100.7", now: Date())
            #expect(session.person == "ann")
            #expect(session.credential != nil, "a credential's session ends with the credential")
            let now = Date().timeIntervalSince1970
            #expect(session.expiresAt <= now + DashboardSessions.lifetime)
            let access = try #require(try await world.signIns.access(cookie: session.cookie, now: now))
            #expect(access.person.role(in: "growth") == .viewer)
            try await world.signIns.signOut(access, source: "198.51.100.7", now: Date())
            #expect(try await world.signIns.access(cookie: session.cookie, now: now) == nil)
            let actions = try await world.actions()
            #expect(actions.suffix(2) == ["sign-in ann", "sign-out ann"])
        }
    }

    @Test func aCredentialThatOpensNothingAsksAgainAndIsAuditedUnderTheNameItClaims() async throws {
        try await with { world in
            // Forged: nothing is claimed.
            let forged = await refusal {
                _ = try await world.signIns.withCredential("not-a-token", source: "198.51.100.7", now: Date())
            }
            #expect(forged?.status == .unauthorized)
            #expect(forged?.asksAgain == true, "the form is shown again beside the message")
            #expect(
                forged?.message.hasPrefix("That is not a live credential of a person of this server") == true)
            // Genuine, but its person was removed since: audited under the name it claims.
            let removed = try await world.credential(of: "bea", role: nil)
            let revoked = await refusal {
                _ = try await world.signIns.withCredential(removed, source: "198.51.100.7", now: Date())
            }
            #expect(revoked?.status == .unauthorized)
            #expect(revoked?.asksAgain == true)
            #expect(revoked?.message.contains("revoked or its person removed") == true)
            let actions = try await world.actions()
            #expect(actions.contains("sign-in.failed unverified:unknown"))
            #expect(actions.contains("sign-in.failed unverified:bea"))
            #expect(!actions.contains { $0.contains(removed) }, "the credential is never audited")
            #expect(!actions.contains { $0.hasPrefix("sign-in ") }, "\(actions)")
        }
    }

    @Test func aSourcePastItsLimitIsRefusedUncheckedWithItsWaitAndAPersonElsewhereSignsIn() async throws {
        try await with(burst: 3) { world in
            for _ in 0..<3 {
                let refused = await refusal {
                    _ = try await world.signIns.withCredential("guess", source: "203.0.113.66", now: Date())
                }
                #expect(refused?.status == .unauthorized)
            }
            let before = try await world.actions()
            #expect(before.contains("sign-in.rate-limited unverified:unknown"))
            let limited = await refusal {
                _ = try await world.signIns.withCredential("guess", source: "203.0.113.66", now: Date())
            }
            #expect(limited?.status == .tooManyRequests)
            #expect((limited?.retryAfter ?? 0) > 0)
            #expect(limited?.asksAgain == false)
            #expect(try await world.actions() == before, "a refusal past the limit is not audited one by one")
            // A forged form from that source is limited too, and another source is not.
            let crossSite = try await world.signIns.refuseCrossSite(source: "203.0.113.66", now: Date())
            #expect(crossSite.status == .tooManyRequests)
            let credential = try await world.credential(of: "cai", role: .owner)
            let session = try await world.signIns.withCredential(
                credential, source: "198.51.100.8", now: Date())
            #expect(session.person == "cai")
        }
    }

    @Test func aSignInFromAnotherSiteIsRefusedCountedAndAudited() async throws {
        try await with(burst: 2) { world in
            let first = try await world.signIns.refuseCrossSite(source: "192.0.2.4", now: Date())
            #expect(first.status == .forbidden)
            #expect(first.message.contains("did not come from this dashboard's own page"))
            #expect(try await world.actions() == ["sign-in.refused unverified:unknown"])
            _ = try await world.signIns.refuseCrossSite(source: "192.0.2.4", now: Date())
            #expect(world.limiter.retryAfter(source: "192.0.2.4", now: Date().timeIntervalSince1970) != nil)
        }
    }

    @Test func withNoIdentityProviderItsSignInIsNotFound() async throws {
        try await with { world in
            #expect(!world.signIns.offersProvider)
            let start = await refusal { _ = try await world.signIns.startWithProvider(now: Date()) }
            #expect(start?.status == .notFound)
            let finish = await refusal {
                _ = try await world.signIns.finishWithProvider(
                    code: "c", state: "s", error: nil, cookie: nil, source: "192.0.2.5", now: Date())
            }
            #expect(finish?.status == .notFound)
            let actions = try await world.actions()
            #expect(actions.isEmpty, "\(actions)")
        }
    }
}
