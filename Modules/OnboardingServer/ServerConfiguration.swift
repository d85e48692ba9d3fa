import Foundation
import PostgresNIO
import ServerControlPlane
import ServerInsights
import ServerKit
import ServerSyncAPI
import ServerTokens

/// Where the server listens, which database it uses and the secret its tokens are signed with.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var database: DatabaseURL
    /// A streaming replica of `database` the dashboard's pages read their figures from
    /// (`READ_DATABASE_URL`), waiting until it has replayed what the primary had; nil: the primary.
    public var readDatabase: DatabaseURL?
    /// Signs and checks tokens. Read from `ONBOARDING_SERVER_SECRET` (or its `_FILE`) only, never
    /// from a flag (flags show in process lists) and never logged.
    public var tokens: TokenSigner
    /// An identity provider whose JWTs are also account tokens, if one is configured.
    public var identityProvider: IdentityProviderSettings?
    /// Sign-in to the dashboard through an OpenID Connect provider, if configured.
    public var oidc: OIDCConfiguration?
    /// The dashboard's origin as browsers reach it (`ONBOARDING_PUBLIC_URL`), if not the `Host`.
    public var publicURL: String?
    /// Peer addresses of the balancers in front, whose `X-Forwarded-For` names the client.
    public var trustedProxies: Set<String> = []
    /// Connections kept to PostgreSQL by this process.
    public var maximumConnections: Int
    /// Batches of pushes written at once (``PushBatcher``): the rest of the connections serve pulls,
    /// reports, pages and the insights job.
    public var pushWriters: Int
    /// Pushes that may wait for a writer before the server sheds more with 503 (``PushBatcher``).
    public var pushQueue: Int?
    /// PostgreSQL cancels a push statement running longer (the writers' `statement_timeout`).
    public var pushStatementTimeoutMilliseconds = 2500
    /// The apps whose tokens may write the family's display budget; nil: the registered apps.
    public var budgetFamily: Set<String>?
    /// Where `/metrics` listens (ServerMetrics), when it does: a port of its own, loopback by default.
    public var metricsPort: Int?
    public var metricsHost = "127.0.0.1"
    /// Requests answered at once while the server keeps up, when set (`serve
    /// --max-requests-in-flight`); else ``defaultRequestsInFlight(pushWriters:)``. Under an
    /// overload the limit is ``steadyRequestsInFlightLimit``. Past it a request is answered 503 in
    /// its connection's pipeline, before it costs anything more (``RequestsInFlight``).
    public var maximumRequestsInFlight: Int?
    /// The limit the server applies: the one set, or the default for its push writers.
    public var requestsInFlightLimit: Int {
        maximumRequestsInFlight ?? Self.defaultRequestsInFlight(pushWriters: pushWriters)
    }
    /// A client connection with no request for this long is closed.
    public var clientIdleTimeout: Duration = .seconds(60)

    /// Enrollments a source may make per minute (a burst of this many, then one every 60/N s).
    public var enrollmentsPerMinute = 60
    /// The `Cache-Control: max-age` of the publications list: devices pull it at launch at most
    /// once per this many seconds.
    public var publicationMaxAge = 300
    /// Facts of pushes received more than this many days ago are dropped (nil: kept).
    public var retainFactsDays: Int?
    /// How often the rollout guard looks at the guarded rollouts (and a server not leading it
    /// tries to take it over).
    public var rolloutGuardInterval: Duration = .seconds(30)
    /// How often the insights job counts (``InsightsCatchUp/interval`` by default).
    public var insightsInterval: Duration = InsightsCatchUp.interval

    public init(
        host: String, port: Int, database: DatabaseURL, tokens: TokenSigner,
        identityProvider: IdentityProviderSettings? = nil, maximumConnections: Int = 16,
        pushWriters: Int? = nil
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.tokens = tokens
        self.identityProvider = identityProvider
        self.maximumConnections = maximumConnections
        self.pushWriters = pushWriters ?? Self.defaultPushWriters(connections: maximumConnections)
    }

    /// Thirty-two requests for each push writer, at least 64, while the server keeps up: room for
    /// a steady load's bursts (a pause of the server's, a fleet's pushes arriving together), and
    /// little enough that the first tenth of a second of an overload, before the limit falls to
    /// ``steadyRequestsInFlightLimit``, is answered within tens of milliseconds (at 64 a writer,
    /// that tenth of a second took the accepted p99 at three times capacity past 50 ms).
    public static func defaultRequestsInFlight(pushWriters: Int) -> Int { max(64, pushWriters * 32) }

    /// The limit under an overload (``AdmissionLimit``): twelve requests for each push writer, at
    /// least 24, at most ``requestsInFlightLimit``. The accepted latency under an overload is what
    /// the requests held take (Performance.md: at three times capacity on two cores, 24 held gave
    /// an accepted p99 of 28 ms, 32 gave 33-58 ms and 128 gave 78-135 ms).
    public var steadyRequestsInFlightLimit: Int {
        min(requestsInFlightLimit, max(24, pushWriters * 12))
    }

    public static func defaultPushWriters(connections: Int) -> Int { max(1, connections / 8) }
}

/// An identity provider for account tokens: its issuer and where its keys are.
public struct IdentityProviderSettings: Sendable {
    public var issuer: String
    public var keys: JWKSource.Origin

    public init(issuer: String, keys: JWKSource.Origin) {
        self.issuer = issuer
        self.keys = keys
    }
}

/// A `postgres://user:password@host:port/database?sslmode=disable` URL (the `DATABASE_URL`
/// convention), or a Unix socket folder as `postgres://user@/database?host=/run/postgresql`.
public struct DatabaseURL: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var socketFolder: String?
    public var user: String
    public var password: String?
    public var database: String
    public var requiresTLS: Bool
    /// Every host of a multi-host URL (`postgres://USER@HOST1:PORT1,HOST2:PORT2/DATABASE`), in
    /// order; ``host`` and ``port`` are the one in use (the first until ``DatabaseFailover`` picks).
    public var hosts: [Endpoint]
    /// `target_session_attrs`, as libpq reads it: `read-write` takes only a primary (a standby
    /// answers read-only), `standby` only a standby (a replica's URL, `READ_DATABASE_URL`), `any`
    /// the first that answers.
    public var targetSessionAttributes: String

    public struct Endpoint: Sendable, Equatable, CustomStringConvertible {
        public var host: String
        public var port: Int
        public var description: String { "\(host):\(port)" }
    }

    public init(_ text: String) throws(ServerConfigurationError) {
        let example = "postgres://USER:PASSWORD@HOST:PORT/DATABASE"
        // Several hosts (`HOST1:PORT1,HOST2:PORT2`) are read here, as libpq reads them; the rest of
        // the URL is read with the first.
        var text = text
        var endpoints: [Endpoint] = []
        if let schemeEnd = text.range(of: "://") {
            let rest = text[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            let hostsStart =
                authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
            let hostList = authority[hostsStart...]
            if hostList.contains(",") {
                for item in hostList.split(separator: ",", omittingEmptySubsequences: false) {
                    let parts = item.split(separator: ":", omittingEmptySubsequences: false)
                    guard !item.isEmpty, parts.count <= 2, let host = parts.first.map(String.init),
                        !host.isEmpty,
                        let port = parts.count == 2 ? Int(parts[1]) : 5432, (1...65535).contains(port)
                    else {
                        throw ServerConfigurationError(
                            """
                            a database URL with several hosts lists them as HOST:PORT,HOST:PORT \
                            (postgres://USER@HOST1:PORT1,HOST2:PORT2/DATABASE)
                            """
                        )
                    }
                    endpoints.append(Endpoint(host: host, port: port))
                }
                text.replaceSubrange(hostList.startIndex..<hostList.endIndex, with: endpoints[0].description)
            }
        }
        guard let components = URLComponents(string: text),
            ["postgres", "postgresql"].contains(components.scheme ?? "")
        else {
            throw ServerConfigurationError("the database URL must look like \(example)")
        }
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") },
            uniquingKeysWith: { _, last in last })
        host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
        port = components.port ?? 5432
        socketFolder = query["host"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        guard let user = components.user, !user.isEmpty else {
            throw ServerConfigurationError("the database URL has no user: \(example)")
        }
        self.user = user.removingPercentEncoding ?? user
        password = components.password.map { $0.removingPercentEncoding ?? $0 }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.isEmpty else {
            throw ServerConfigurationError("the database URL names no database: \(example)")
        }
        database = path
        switch query["sslmode"] ?? "disable" {
        case "disable", "allow", "prefer": requiresTLS = false
        case "require", "verify-ca", "verify-full": requiresTLS = true
        case let other:
            throw ServerConfigurationError(
                "sslmode '\(other)' is not one of disable, allow, prefer, require, verify-ca, verify-full")
        }
        hosts = endpoints.isEmpty ? [Endpoint(host: host, port: port)] : endpoints
        switch query["target_session_attrs"] ?? "any" {
        case "any", "read-write", "standby": targetSessionAttributes = query["target_session_attrs"] ?? "any"
        case let other:
            throw ServerConfigurationError(
                "target_session_attrs '\(other)' is not one of any, read-write, standby")
        }
    }

    /// The same URL on another of its hosts.
    public func using(_ endpoint: Endpoint) -> DatabaseURL {
        var copy = self
        copy.host = endpoint.host
        copy.port = endpoint.port
        return copy
    }

    /// The URL with the password masked, for logs.
    public var description: String {
        let credentials = password == nil ? user : "\(user):‹redacted›"
        let place = socketFolder.map { "?host=\($0)" } ?? ""
        let hostList =
            hosts.count > 1
            ? hosts.map { $0 == Endpoint(host: host, port: port) ? "[\($0)]" : "\($0)" }.joined(
                separator: ",") : "\(host):\(port)"
        return "postgres://\(credentials)@\(socketFolder == nil ? hostList : "")/\(database)\(place)"
    }

    /// The same server, another database (the tests' per-test databases, the maintenance one).
    public func database(_ name: String) -> DatabaseURL {
        var copy = self
        copy.database = name
        return copy
    }

    /// One connection's configuration (a LISTEN, a probe), named `role` in `pg_stat_activity`.
    public func connectionConfiguration(role: String) throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let socketFolder {
            configuration = .init(
                unixSocketPath: "\(socketFolder)/.s.PGSQL.\(port)", username: user, password: password,
                database: database)
        } else {
            configuration = .init(
                host: host, port: port, username: user, password: password, database: database,
                tls: requiresTLS ? .require(try .init(configuration: .makeClientConfiguration())) : .disable)
        }
        configuration.options.connectTimeout = .seconds(2)
        configuration.options.additionalStartupParameters.append(("application_name", role))
        return configuration
    }

    /// A pool's configuration; `role` names its connections in `pg_stat_activity`
    /// (`application_name`), so an operator tells the push writers from the reads.
    public func clientConfiguration(maximumConnections: Int, role: String = "onboarding-server")
        -> PostgresClient.Configuration
    {
        var configuration: PostgresClient.Configuration
        if let socketFolder {
            configuration = .init(
                unixSocketPath: "\(socketFolder)/.s.PGSQL.\(port)", username: user, password: password,
                database: database)
        } else {
            configuration = .init(
                host: host, port: port, username: user, password: password, database: database,
                tls: requiresTLS ? .require(.makeClientConfiguration()) : .disable)
        }
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = .seconds(3)
        configuration.options.additionalStartupParameters.append(("application_name", role))
        return configuration
    }
}
