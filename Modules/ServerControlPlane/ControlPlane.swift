import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServerDatabase
import ServerKit
import ServerTokens

/// Who may act on the control plane and what each act leaves behind (Docs/Security.md): people's
/// credentials checked against their live row and roles on every request, failures rate limited,
/// every act one audit row. Shared by the API routes and the dashboard.
public struct ControlPlane: Sendable {
    public let people: PeopleStore
    public let audit: AuditLog
    public let keys: PublicationKeyStore
    public let tokens: TokenSigner
    public let limiter: RateLimiter
    public let clients: ClientAddress
    let logger: Logger

    public init(
        writes: WritableDatabase, reads: ReadOnlyDatabase, tokens: TokenSigner,
        limiter: RateLimiter = RateLimiter(),
        clients: ClientAddress = ClientAddress(), logger: Logger
    ) {
        people = PeopleStore(writes: writes, reads: reads, logger: logger)
        audit = AuditLog(writes: writes, reads: reads, logger: logger)
        keys = PublicationKeyStore(writes: writes, reads: reads, logger: logger)
        self.tokens = tokens
        self.limiter = limiter
        self.clients = clients
        self.logger = logger
    }

    /// The time before which the account's tokens are refused, if it ever signed out everywhere or
    /// was erased. Cut-offs are kept under the subject's pseudonyms, never its id
    /// (``TokenSigner/subjectPseudonyms(app:subject:)``: `names`, one per key of the ring).
    public func tokenCutoff(app: String, names: [String]) async throws -> Double? {
        try await people.reads.read { connection, logger in
            let rows = try await connection.query(
                "SELECT max(not_before) FROM token_cutoffs WHERE app = \(app) AND account = ANY(\(names))",
                logger: logger)
            for try await notBefore in rows.decode(Double?.self) { return notBefore }
            return nil
        }
    }

    /// The `Authorization: Bearer` token of a request, if it has one.
    static func bearer(_ request: Request) -> String? {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst("Bearer ".count))
    }

    /// A 429 for a source or person past its limit.
    static func limited(_ seconds: Double, _ who: String) -> APIError {
        let wait = Int(seconds.rounded(.up))
        return APIError(
            status: .tooManyRequests, code: "rate_limited",
            message: "too many failed sign-ins or tokens from \(who); try again in \(wait) s",
            retryAfter: wait)
    }

    /// The answer to a token whose signature did not check (a forgery, a guess, a dropped key's):
    /// counted against the source, and past its limit a 429 instead (a source's valid tokens are
    /// checked first and never refused for it, so nobody behind a shared address is locked out).
    func refusal(_ error: APIError, source: String, now: Double) -> APIError {
        if let wait = limiter.retryAfter(source: source, now: now) {
            return Self.limited(wait, "this address")
        }
        limiter.failed(source: source, now: now)
        return error
    }

    /// The person a credential opens (`text`, the signed token), checked in full: the key ring's
    /// signature (first, and cheap: a source past its limit costs nothing more), the expiry, the
    /// credential's row (live, theirs) and the person's existence. A genuine token that is merely
    /// old (expired, or a retired admin token) is not counted; a forged one counts against
    /// `source`, a revoked one against `source` and the person it names.
    package func person(credential text: String, source: String, now: Date) async throws -> Person {
        let seconds = now.timeIntervalSince1970
        let claims: TokenClaims
        do {
            claims = try await tokens.verify(text, now: now)
        } catch {
            switch error {
            case .expired:
                throw APIError(
                    status: .unauthorized, code: "token_expired",
                    message:
                        """
                        the credential has expired; ask an owner for a new one (onboarding-server people \
                        rotate)
                        """
                )
            case .adminRetired:
                throw Self.adminRetired
            case .unknownKey:
                throw refusal(
                    APIError(
                        status: .unauthorized, code: "unauthorized",
                        message:
                            """
                            the credential was signed by a key this server no longer accepts; \
                            ask for a new one
                            """
                    ),
                    source: source, now: seconds)
            default:
                throw refusal(
                    APIError(
                        status: .unauthorized, code: "unauthorized", message: "the credential is not valid"),
                    source: source,
                    now: seconds)
            }
        }
        guard claims.scope == .person, let id = claims.credential else {
            throw APIError(
                status: .forbidden, code: "forbidden",
                message:
                    """
                    an account token opens only its account; this needs a person's credential \
                    (onboarding-server people add)
                    """
            )
        }
        // A read under the request deadline: a database that does not answer is a 503, not a
        // request held (and a shutdown waiting on it) for as long as it does not.
        let people = people
        let subject = claims.subject
        let found = try await (people.person(credential: id, of: subject, now: seconds))
        guard let person = found else {
            if let wait = limiter.retryAfter(person: claims.subject, now: seconds)
                ?? limiter.retryAfter(source: source, now: seconds)
            {
                throw Self.limited(
                    wait,
                    limiter.retryAfter(person: claims.subject, now: seconds) != nil
                        ? claims.subject : "this address")
            }
            limiter.failed(source: source, person: claims.subject, now: seconds)
            if let wait = limiter.retryAfter(person: claims.subject, now: seconds) {
                throw Self.limited(wait, claims.subject)
            }
            throw APIError(
                status: .unauthorized, code: "credential_revoked",
                message: "this credential was revoked or its person removed; ask an owner for a new one")
        }
        return person
    }

    static let adminRetired = APIError(
        status: .unauthorized, code: "token_outdated",
        message:
            """
            shared admin tokens are no longer accepted: each person has their own credential \
            (onboarding-server people add --name NAME --role ROLE --app APP)
            """
    )

    /// The actor `person` is for a request from `source` that needs `role` in `app` (nil: every
    /// app, an operator's act); refused when they do not hold it.
    static func actor(_ person: Person, source: String, app: String?, role: Role, to what: String) throws
        -> Actor
    {
        let actor = Actor(name: person.name, source: source, person: person)
        guard actor.may(role, in: app) else {
            let held =
                person.role(in: app).map { "\($0.rawValue) of \(app ?? "every app")" }
                ?? "not a member of \(app ?? "every app")"
            throw APIError(
                status: .forbidden, code: "forbidden",
                message:
                    """
                    \(person.name) is \(held); \(what) needs the \(role.rawValue) role\
                    \(app == nil ? " across every app" : "")
                    """
            )
        }
        return actor
    }
}
