import Foundation
import HTTPTypes
import Logging
import ServerKit

/// Signing in to the dashboard and out of it (Docs/Security.md): with a person's credential, or
/// through the identity provider (``OIDCSignIn``). What a sign-in may do is decided here, whichever
/// page asks:
/// - every attempt leaves an audit row (a failed one under `unverified:` and the name it claimed,
///   never the credential);
/// - failures count against their source's limit (``RateLimiter``), and a source past it is refused
///   unchecked, with how long to wait;
/// - a session opens only for a person who holds a role somewhere, audited in its transaction.
///
/// The dashboard parses the forms, checks their anti-forgery tokens, sets the cookies and renders
/// the pages; a ``Refusal`` says what it shows.
package struct SignIns: Sendable {
    let controlPlane: ControlPlane
    let people: any PeopleRepository
    let sessions: any SessionRepository
    let auditTrail: any AuditRepository
    /// Sign-in through the identity provider, when one is configured for people.
    let provider: OIDCSignIn?
    let logger: Logger

    package init(
        controlPlane: ControlPlane, people: any PeopleRepository, sessions: any SessionRepository,
        auditTrail: any AuditRepository, provider: OIDCSignIn?, logger: Logger
    ) {
        self.controlPlane = controlPlane
        self.people = people
        self.sessions = sessions
        self.auditTrail = auditTrail
        self.provider = provider
        self.logger = logger
    }

    /// A sign-in that opened nothing: its status, and what the person is told.
    package struct Refusal: Error, Equatable, Sendable {
        package var status: HTTPResponse.Status
        package var message: String
        /// Seconds to wait, for a source past its limit of failures.
        package var retryAfter: Int?
        /// Whether the sign-in form is shown again beside the message (a credential that opens
        /// nothing: the person may type another), rather than a page of its own.
        package var asksAgain = false
    }

    /// Whether people may sign in through the identity provider.
    package var offersProvider: Bool { provider != nil }

    /// The person a session cookie's value signs in, with their roles as they are now; nil for a
    /// value that opens no live session.
    package func access(cookie: String, now: Double) async throws -> DashboardAccess? {
        guard let session = try await sessions.find(cookie, now: now),
            let person = try await people.person(session.person)
        else { return nil }
        return DashboardAccess(session: session, person: person)
    }

    // MARK: - With a credential

    /// A sign-in posted from another site's page (login CSRF: a page elsewhere posting its own
    /// credential into this browser): refused, and counted against the source, so it cannot flood
    /// the audit trail either.
    package func refuseCrossSite(source: String, now: Date) async throws -> Refusal {
        let seconds = now.timeIntervalSince1970
        if let wait = controlPlane.limiter.retryAfter(source: source, now: seconds) {
            return Self.limited(wait)
        }
        controlPlane.limiter.failed(source: source, now: seconds)
        try await audit(
            .unverified("unknown", source), "sign-in.refused", why: "the form was posted from another site")
        return Refusal(
            status: .forbidden,
            message: "This sign-in did not come from this dashboard's own page, so it was refused.")
    }

    /// The session `credential` opens for its person; a ``Refusal`` when it opens none.
    package func withCredential(_ credential: String, source: String, now: Date) async throws
        -> DashboardSessions.Session
    {
        let person: Person
        do {
            person = try await controlPlane.person(credential: credential, source: source, now: now)
        } catch let error as APIError {
            // Refused unchecked (past the limit): not audited one by one.
            if error.status == .tooManyRequests { throw Self.limited(Double(error.retryAfter ?? 1)) }
            // The name the credential claims, when its signature is good (a revoked one): never the
            // credential.
            let claimed = (try? await controlPlane.tokens.verify(credential, now: now))?.subject ?? "unknown"
            try await audit(.unverified(claimed, source), "sign-in.failed", why: error.message)
            if controlPlane.limiter.retryAfter(source: source, now: now.timeIntervalSince1970) != nil {
                try await audit(
                    .unverified(claimed, source), "sign-in.rate-limited",
                    why: "too many failures from this address")
            }
            let message =
                error.code == "token_outdated"
                ? """
                Shared admin tokens are no longer accepted: sign in with your own credential (an owner \
                or operator makes one with onboarding-server people add).
                """
                : "That is not a live credential of a person of this server: \(error.message)."
            throw Refusal(
                status: error.status == .forbidden ? .forbidden : .unauthorized, message: message,
                asksAgain: true)
        }
        let claims = try? await controlPlane.tokens.verify(credential, now: now)
        return try await open(
            for: person, credential: claims?.credential, expires: Double(claims?.expires ?? 0),
            source: source,
            method: "credential", now: now)
    }

    // MARK: - Through the identity provider

    /// The first leg: where the browser goes, and the sealed cookie it must bring back.
    package func startWithProvider(now: Date) async throws -> OIDCSignIn.Start {
        guard let provider else { throw Self.noProvider }
        do { return try await provider.start(sealingWith: controlPlane.tokens, now: now) } catch {
            logger.inRequest.warning(
                "the identity provider's discovery failed", metadata: ["error": "\(error)"])
            throw Refusal(
                status: .serviceUnavailable,
                message: "The identity provider does not answer; try again, or sign in with your credential.")
        }
    }

    /// The second leg, from the provider's redirect back (its query's `code`, `state` and `error`)
    /// and the first leg's cookie: the session of the person whose identity the provider proved.
    package func finishWithProvider(
        code: String?, state: String?, error: String?, cookie: String?, source: String, now: Date
    ) async throws -> DashboardSessions.Session {
        guard let provider else { throw Self.noProvider }
        let seconds = now.timeIntervalSince1970
        if let wait = controlPlane.limiter.retryAfter(source: source, now: seconds) {
            throw Self.limited(wait)
        }
        if let error {
            throw Refusal(
                status: .unauthorized,
                message: "The identity provider did not sign you in (\(error.prefix(100))).")
        }
        guard let code, let state, code.count <= 4096, state.count <= 256 else {
            throw Refusal(
                status: .badRequest, message: "The identity provider's answer has no code and state.")
        }
        let identity: String
        do {
            identity = try await provider.finish(
                code: code, state: state, cookie: cookie, tokens: controlPlane.tokens, now: now)
        } catch .unavailable(let why) {
            logger.inRequest.warning(
                "sign-in through the identity provider failed", metadata: ["error": "\(why)"])
            throw Refusal(
                status: .serviceUnavailable, message: "The identity provider does not answer; try again.")
        } catch .refused(let why) {
            controlPlane.limiter.failed(source: source, now: seconds)
            try await audit(
                .unverified("unknown", source), "sign-in.failed", why: why, method: "identity provider")
            throw Refusal(status: .unauthorized, message: "Not signed in: \(why).")
        }
        guard let person = try await people.person(identity: identity) else {
            controlPlane.limiter.failed(source: source, now: seconds)
            try await audit(
                .unverified(identity, source), "sign-in.failed", why: "no person has this identity",
                method: "identity provider")
            throw Refusal(
                status: .forbidden,
                message: """
                    \(identity) is not a person of this server. An owner or operator adds you \
                    (onboarding-server people add --identity).
                    """)
        }
        return try await open(
            for: person, credential: nil, expires: seconds + DashboardSessions.lifetime, source: source,
            method: "identity provider", now: now)
    }

    // MARK: - Out

    /// Ends the session, with its audit row in the same transaction.
    package func signOut(_ access: DashboardAccess, source: String, now: Date) async throws {
        let audit = AuditLog.Entry(
            at: now.timeIntervalSince1970,
            actor: Actor(name: access.person.name, source: source, person: access.person), app: nil,
            action: "sign-out")
        try await sessions.close(access.session.cookie, audit: audit)
    }

    // MARK: - Shared

    /// Opens a session for `person` (who must hold a role somewhere), audited in the same
    /// transaction.
    private func open(
        for person: Person, credential: String?, expires: Double, source: String, method: String, now: Date
    ) async throws -> DashboardSessions.Session {
        let seconds = now.timeIntervalSince1970
        guard !person.roles.isEmpty else {
            throw Refusal(
                status: .forbidden, message: "\(person.name) holds no role in any app; an owner gives one.")
        }
        let audit = AuditLog.Entry(
            at: seconds, actor: Actor(name: person.name, source: source, person: person), app: nil,
            action: "sign-in", details: ["method": .string(method)])
        let session = try await sessions.open(
            person: person.name, credential: credential, expires: expires, now: seconds, audit: audit)
        logger.inRequest.info(
            "dashboard sign-in", metadata: ["person": "\(person.name)", "method": "\(method)"])
        return session
    }

    private func audit(_ actor: Actor, _ action: String, why: String?, method: String? = nil) async throws {
        if action != "sign-in" { ServerMetrics.signInFailures.increment() }
        try await auditTrail.record(
            .init(
                at: Date().timeIntervalSince1970, actor: actor, app: nil, action: action,
                details: .members(["reason": why.map { .string($0) }, "method": method.map { .string($0) }])))
    }

    private static func limited(_ wait: Double) -> Refusal {
        let seconds = Int(wait.rounded(.up))
        return Refusal(
            status: .tooManyRequests,
            message: """
                Too many failed sign-ins from this address. Try again in \(seconds) seconds; every failure \
                waits longer.
                """,
            retryAfter: seconds)
    }

    private static let noProvider = Refusal(
        status: .notFound, message: "No identity provider is configured for the dashboard.")
}

extension Actor {
    /// Who a failed sign-in claimed to be: never taken for a person of that name (audit rows say
    /// `unverified:` before it).
    static func unverified(_ claimed: String, _ source: String) -> Actor {
        Actor(name: "unverified:" + String(claimed.prefix(200)), source: source, person: nil)
    }
}
