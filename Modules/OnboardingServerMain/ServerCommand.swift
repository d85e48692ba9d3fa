import AccountSync
import ArgumentParser
import Foundation
import Logging
import OnboardingServer
import PostgresNIO
import ServerControlPlane
import ServerDashboard
import ServerDatabase
import ServerSyncAPI
import ServerTokens
import TourCore

/// `onboarding-server`: the account server, its migrations, its tokens and its control plane.
@main
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "onboarding-server",
        abstract:
            "The account server: onboarding state that follows a user across devices, and its control plane.",
        discussion: """
            Environment (secrets only from here, or from a file named by NAME_FILE; never a flag): \
            DATABASE_URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE), READ_DATABASE_URL (a streaming \
            replica \
            the dashboard's pages and /report read their figures from), ONBOARDING_SERVER_SECRET (at least \
            32 bytes; signs tokens) or ONBOARDING_SERVER_KEYS ("ID=SECRET ID=SECRET", the first signs: \
            rotation with overlap), ONBOARDING_IDP_ISSUER with ONBOARDING_IDP_JWKS_URL (an identity \
            provider's JWTs as account tokens), ONBOARDING_OIDC_* and ONBOARDING_PUBLIC_URL (people sign in \
            to the dashboard through a provider), ONBOARDING_TRUSTED_PROXIES, HOST, PORT, LOG_LEVEL. \
            Docs/Operating.md and Docs/Security.md.
            """,
        version: OnboardingServerVersion.text,
        subcommands: [
            Serve.self, Migrate.self, Token.self, SignOutCommand.self, PeopleCommand.self, KeysCommand.self,
            AuditCommand.self,
            Register.self, Publish.self, Unpublish.self, RolloutCommand.self, EnrollmentKeysCommand.self,
            EraseCommand.self, ExportCommand.self, RetainFactsCommand.self, FlowsCommand.self,
        ], defaultSubcommand: Serve.self)
}

enum OnboardingServerVersion {
    static var text: String { "onboarding-server \(OnboardingVersion.current)" }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the /v1 API and the dashboard (the default).")

    @Option(help: "The address to listen on (default: $HOST or 127.0.0.1).")
    var host: String?
    @Option(help: "The port to listen on (default: $PORT or 8080).")
    var port: Int?
    @Option(help: "Connections to PostgreSQL kept by this process.")
    var connections = 16
    @Option(
        help: ArgumentHelp(
            """
            Pushes written at once, each a batch of the pushes waiting (default: \
            \(ServerConfiguration.defaultPushWriters(connections: 16)) of 16 connections).
            """,
            discussion:
                """
                Fewer writers batch more under load (fewer transactions, more waiting per push); \
                from 1 to --connections.
                """
        ))
    var pushWriters: Int?
    @Option(
        help: ArgumentHelp(
            """
            Pushes that may wait for a writer; past it pushes are shed with 503 and Retry-After (default: \
            2048 per writer).
            """,
            discussion: "From 1 to 100000. A push also waits at most 1.5 s for a writer."))
    var pushQueue: Int?
    @Option(
        help: ArgumentHelp(
            """
            Serve Prometheus metrics at /metrics on this port (default: $ONBOARDING_METRICS_PORT; \
            none when unset).
            """,
            discussion:
                """
                A listener of its own, for scrapers on the private network; the balancer should not forward \
                it.
                """
        ))
    var metricsPort: Int?
    @Option(help: "The address the metrics listener binds (default: 127.0.0.1).")
    var metricsHost = "127.0.0.1"
    @Option(
        name: .customLong("trusted-proxy"),
        help:
            """
            The address of a balancer in front, whose X-Forwarded-For names the client (repeatable; default: \
            $ONBOARDING_TRUSTED_PROXIES).
            """
    )
    var trustedProxies: [String] = []
    @Option(
        help:
            """
            The dashboard's address as browsers reach it, https://HOST[:PORT] (default: \
            $ONBOARDING_PUBLIC_URL).
            """
    )
    var publicURL: String?
    @Option(
        help:
            """
            Installs one address may enroll per minute (a burst of this many, then one every 60/N s; \
            1 to 1000000).
            """
    )
    var enrollmentsPerMinute = 60
    @Option(
        help:
            """
            Seconds a device keeps the publications list before it asks again at launch (Cache-Control \
            max-age; 0 to 86400).
            """
    )
    var publicationMaxAge = 300
    @Option(
        help:
            """
            Drop the facts of pushes received more than DAYS days ago, every minute, \
            keeping the counts (1 to 36500; default: keep).
            """
    )
    var retainFacts: Int?
    @Option(help: "Seconds between the rollout guard's looks at guarded rollouts (0.1 to 3600; default: 30).")
    var rolloutGuardInterval = 30.0
    @Option(
        help: ArgumentHelp(
            "Seconds between the insights job's runs (0.05 to 10).",
            discussion:
                "Each run counts the pushes committed since the last and commits; "
                + "a longer interval means fewer, larger runs beside the pushes, "
                + "and figures that much older (/report asks for a run of its own)."))
    var insightsInterval = 1.0
    @Option(
        help: ArgumentHelp(
            "Requests answered at once (1 to 100000; default: 32 per push writer, at least 64).",
            discussion:
                "Under an overload it falls to 12 per push writer (at least 24, at most this): once that "
                + "many or more have been answered at once for 100 ms on end, "
                + "until fewer have for 100 ms. "
                + "Past it a request is answered 503 with Retry-After "
                + "before it is routed, checked or logged, "
                + "so an overload costs the server little and the requests it takes stay fast. "
                + "Health and readiness checks are always answered."
        ))
    var maxRequestsInFlight: Int?
    @Option(
        help: ArgumentHelp(
            "Seconds a client connection may stay with no request before it is closed "
                + "(1 to 3600; default: 60).")
    )
    var clientIdleTimeout: Double?
    @OptionGroup var database: DatabaseOptions
    @Option(name: .customLong("read-database-url"), help: .hidden)
    var refusedReadDatabaseURL: String?

    func validate() throws {
        if refusedReadDatabaseURL != nil {
            throw ValidationError(
                """
                --read-database-url is not accepted: a URL with a password on the command line shows to \
                everyone who runs ps. Set READ_DATABASE_URL, or READ_DATABASE_URL_FILE to a file that holds \
                it
                """
            )
        }
    }

    func run() async throws {
        guard (1...1_000_000).contains(enrollmentsPerMinute) else {
            throw ValidationError("--enrollments-per-minute must be from 1 to 1000000")
        }
        guard (0...86_400).contains(publicationMaxAge) else {
            throw ValidationError("--publication-max-age must be from 0 to 86400")
        }
        if let retainFacts, !(1...36_500).contains(retainFacts) {
            throw ValidationError("--retain-facts must be from 1 to 36500 days")
        }
        guard (0.1...3_600).contains(rolloutGuardInterval) else {
            throw ValidationError("--rollout-guard-interval must be from 0.1 to 3600 seconds")
        }
        guard (0.05...10).contains(insightsInterval) else {
            throw ValidationError("--insights-interval must be from 0.05 to 10 seconds")
        }
        if let maxRequestsInFlight, !(1...100_000).contains(maxRequestsInFlight) {
            throw ValidationError("--max-requests-in-flight must be from 1 to 100000")
        }
        if let clientIdleTimeout, !(1...3_600).contains(clientIdleTimeout) {
            throw ValidationError("--client-idle-timeout must be from 1 to 3600 seconds")
        }
        let environment = Settings.environment
        let port =
            try port ?? environment["PORT"].map { text in
                guard let port = Int(text) else { throw Refusal("PORT must be a number from 1 to 65535") }
                return port
            } ?? 8080
        guard (1...65535).contains(port) else { throw ValidationError("the port must be from 1 to 65535") }
        guard (1...1000).contains(connections) else {
            throw ValidationError("--connections must be from 1 to 1000")
        }
        if let pushWriters, !(1...connections).contains(pushWriters) {
            throw ValidationError("--push-writers must be from 1 to --connections (\(connections))")
        }
        if let pushQueue, !(1...100_000).contains(pushQueue) {
            throw ValidationError("--push-queue must be from 1 to 100000")
        }
        let proxies =
            trustedProxies.isEmpty
            ? (environment["ONBOARDING_TRUSTED_PROXIES"] ?? "").split(whereSeparator: {
                $0 == " " || $0 == ","
            }).map(String.init)
            : trustedProxies
        let publicURL = try
            (publicURL ?? environment["ONBOARDING_PUBLIC_URL"].flatMap { $0.isEmpty ? nil : $0 }).map {
                text in
                guard let url = URL(string: text), let scheme = url.scheme,
                    ["http", "https"].contains(scheme), let host = url.host,
                    url.path.isEmpty || url.path == "/", url.query == nil
                else {
                    throw ValidationError(
                        "the public URL is scheme://HOST[:PORT] (no path), got '\(text.prefix(200))'")
                }
                return "\(scheme)://\(host)\(url.port.map { ":\($0)" } ?? "")"
            }
        var configuration = ServerConfiguration(
            host: host ?? environment["HOST"] ?? "127.0.0.1", port: port, database: try database.resolved(),
            tokens: try secret(), identityProvider: try identityProvider(), maximumConnections: connections,
            pushWriters: pushWriters)
        configuration.pushQueue = pushQueue
        configuration.enrollmentsPerMinute = enrollmentsPerMinute
        configuration.publicationMaxAge = publicationMaxAge
        configuration.retainFactsDays = retainFacts
        configuration.rolloutGuardInterval = .seconds(rolloutGuardInterval)
        configuration.insightsInterval = .seconds(insightsInterval)
        configuration.maximumRequestsInFlight = maxRequestsInFlight
        if let clientIdleTimeout {
            configuration.clientIdleTimeout = .seconds(clientIdleTimeout)
        }
        if let replica = try Settings.secret("READ_DATABASE_URL") {
            do { configuration.readDatabase = try DatabaseURL(replica) } catch {
                throw Refusal("READ_DATABASE_URL: \(error.description)")
            }
        }
        let metricsPort =
            try metricsPort
            ?? environment["ONBOARDING_METRICS_PORT"].flatMap { $0.isEmpty ? nil : $0 }.map { text in
                guard let port = Int(text) else {
                    throw Refusal("ONBOARDING_METRICS_PORT must be a number from 1 to 65535")
                }
                return port
            }
        if let metricsPort {
            guard (1...65535).contains(metricsPort), metricsPort != port else {
                throw ValidationError(
                    "the metrics port must be from 1 to 65535 and not the API's port (\(port))")
            }
        }
        configuration.metricsPort = metricsPort
        configuration.metricsHost = metricsHost
        if let family = environment["ONBOARDING_BUDGET_FAMILY"], !family.isEmpty {
            let apps = family.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
            guard apps.allSatisfy(SyncAPI.isValidName) else {
                throw Refusal(
                    "ONBOARDING_BUDGET_FAMILY is a list of app ids (\(SyncAPI.nameRule)), separated by commas"
                )
            }
            configuration.budgetFamily = Set(apps)
        }
        configuration.trustedProxies = Set(proxies)
        configuration.publicURL = publicURL
        configuration.oidc = try oidc(publicURL: publicURL)
        try await OnboardingServer.run(configuration, features: [DashboardFeature()], logger: makeLogger())
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply the schema's migrations and exit.")
    @OptionGroup var database: DatabaseOptions
    @Option(help: "Stop after this migration (to stage an upgrade, or to test one).") var through: String?

    func validate() throws {
        if let through, !PostgresSchema.migrations.contains(where: { $0.id == through }) {
            throw ValidationError(
                """
                --through takes a migration id: \
                \(PostgresSchema.migrations.map(\.id).joined(separator: ", "))
                """
            )
        }
    }

    func run() async throws {
        let logger = makeLogger()
        let client = PostgresClient(
            configuration: try database.resolved().clientConfiguration(maximumConnections: 2),
            backgroundLogger: DatabaseOptions.poolLogger(logger))
        let through = through
        let applied = try await client.running {
            try await client.waitUntilAnswering(within: DatabaseOptions.commandDatabaseWait, logger: logger)
            return try await PostgresSchema.migrate(client, logger: logger, through: through)
        }
        print(applied.isEmpty ? "the schema is up to date" : "applied: \(applied.joined(separator: ", "))")
    }
}
