import ArgumentParser
import Foundation
import Logging
import OnboardingServer
import PostgresNIO
import TourCore
import AccountSync

/// `onboarding-server`: the account server, its migrations and its tokens.
@main
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "onboarding-server",
        abstract: "The account server: onboarding state that follows a user across devices.",
        discussion: """
            Environment: DATABASE_URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE), \
            ONBOARDING_SERVER_SECRET (at least 32 bytes; signs tokens; never a flag) or \
            ONBOARDING_SERVER_KEYS ("ID=SECRET ID=SECRET", the first signs: rotation with overlap), \
            ONBOARDING_IDP_JWKS and ONBOARDING_IDP_ISSUER (an identity provider's JWTs as account \
            tokens), HOST, PORT, LOG_LEVEL.
            """,
        version: OnboardingServerVersion.text,
        subcommands: [
            Serve.self, Migrate.self, Token.self, SignOutCommand.self, Register.self, Publish.self, Unpublish.self,
        ], defaultSubcommand: Serve.self)
}

enum OnboardingServerVersion {
    static var text: String { "onboarding-server \(OnboardingVersion.current)" }
}

struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"), help: "The PostgreSQL URL (default: $DATABASE_URL).")
    var databaseURL: String?

    func resolved() throws -> DatabaseURL {
        guard let text = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"] else {
            throw ValidationError(
                "no database: set DATABASE_URL or --database-url to postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        do { return try DatabaseURL(text) } catch { throw ValidationError(error.description) }
    }
}

/// The key ring: `ONBOARDING_SERVER_KEYS` (several keys, the first signs), else the one key of
/// `ONBOARDING_SERVER_SECRET` (id `default`). Never from a flag: flags show in process lists.
func secret() throws -> TokenSigner {
    let environment = ProcessInfo.processInfo.environment
    do {
        if let ring = environment["ONBOARDING_SERVER_KEYS"], !ring.isEmpty { return try TokenSigner(keyRing: ring) }
        guard let secret = environment["ONBOARDING_SERVER_SECRET"] else {
            throw ServerConfigurationError(
                "set ONBOARDING_SERVER_SECRET (at least \(TokenSigner.minimumSecretLength) bytes), or ONBOARDING_SERVER_KEYS")
        }
        return try TokenSigner(secret: secret)
    } catch { throw ValidationError("\(error)") }
}

/// The identity provider of `ONBOARDING_IDP_JWKS` (a JWKS file) and `ONBOARDING_IDP_ISSUER`, if set.
func identityProvider() async throws -> IdentityProvider? {
    let environment = ProcessInfo.processInfo.environment
    let file = environment["ONBOARDING_IDP_JWKS"].flatMap { $0.isEmpty ? nil : $0 }
    let issuer = environment["ONBOARDING_IDP_ISSUER"].flatMap { $0.isEmpty ? nil : $0 }
    guard file != nil || issuer != nil else { return nil }
    guard let file, let issuer else {
        throw ValidationError("set both ONBOARDING_IDP_JWKS (a JWKS file) and ONBOARDING_IDP_ISSUER, or neither")
    }
    guard let data = FileManager.default.contents(atPath: file) else {
        throw ValidationError("ONBOARDING_IDP_JWKS names no readable file: \(file)")
    }
    do {
        return try await IdentityProvider(jwks: String(decoding: data, as: UTF8.self), issuer: issuer)
    } catch { throw ValidationError("ONBOARDING_IDP_JWKS: \(error.description)") }
}

func makeLogger() -> Logger {
    LoggingSystem.bootstrap(StreamLogHandler.standardError)
    var logger = Logger(label: "onboarding-server")
    let level = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:))
    logger.logLevel = level ?? .info
    return logger
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve the /v1 API (the default).")

    @Option(help: "The address to listen on (default: $HOST or 127.0.0.1).")
    var host: String?
    @Option(help: "The port to listen on (default: $PORT or 8080).")
    var port: Int?
    @Option(help: "Connections to PostgreSQL kept by this process.")
    var connections = 16
    @Option(
        help: ArgumentHelp(
            "Pushes written at once, each a batch of the pushes waiting (default: \(ServerConfiguration.defaultPushWriters(connections: 16)) of 16 connections).",
            discussion: "Fewer writers batch more under load (fewer transactions, more waiting per push); from 1 to --connections."))
    var pushWriters: Int?
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let port = try port ?? environment["PORT"].map { text in
            guard let port = Int(text) else { throw ValidationError("PORT must be a number from 1 to 65535") }
            return port
        } ?? 8080
        guard (1...65535).contains(port) else { throw ValidationError("the port must be from 1 to 65535") }
        guard (1...1000).contains(connections) else { throw ValidationError("--connections must be from 1 to 1000") }
        if let pushWriters, !(1...connections).contains(pushWriters) {
            throw ValidationError("--push-writers must be from 1 to --connections (\(connections))")
        }
        let configuration = ServerConfiguration(
            host: host ?? environment["HOST"] ?? "127.0.0.1", port: port, database: try database.resolved(),
            tokens: try secret(), identityProvider: try await identityProvider(), maximumConnections: connections,
            pushWriters: pushWriters)
        try await OnboardingServer.run(configuration, logger: makeLogger())
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply the schema's migrations and exit.")
    @OptionGroup var database: DatabaseOptions
    @Option(help: "Stop after this migration (to stage an upgrade, or to test one).") var through: String?

    func validate() throws {
        if let through, !PostgresSchema.migrations.contains(where: { $0.id == through }) {
            throw ValidationError(
                "--through takes a migration id: \(PostgresSchema.migrations.map(\.id).joined(separator: ", "))")
        }
    }

    func run() async throws {
        let logger = makeLogger()
        let client = PostgresClient(
            configuration: try database.resolved().clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            let applied = try await PostgresSchema.migrate(client, logger: logger, through: through)
            print(applied.isEmpty ? "the schema is up to date" : "applied: \(applied.joined(separator: ", "))")
            group.cancelAll()
        }
    }
}

struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mint a token signed with the signing key ($ONBOARDING_SERVER_KEYS' first, or $ONBOARDING_SERVER_SECRET) and print it.")

    @Option(help: "The app the token is for (required for an account token; an admin token without it reads every app).")
    var app: String?
    @Option(help: "The account the token reads and writes.")
    var account: String?
    @Flag(help: "An admin token, which reads reports (and no account).")
    var admin = false
    @Option(help: "How long it is valid, in days.")
    var days = 30

    func run() throws {
        guard (account == nil) == admin else {
            throw ValidationError("give either --account ACCOUNT or --admin")
        }
        if let account, !SyncAPI.isValidName(account) {
            throw ValidationError("the account must be \(SyncAPI.nameRule)")
        }
        if account != nil, app == nil {
            throw ValidationError("an account token is for one app: give --app APP (finite, lockedin, carrierwave, growth, moodtracker, ...)")
        }
        if let app, !SyncAPI.isValidName(app) { throw ValidationError("the app must be \(SyncAPI.nameRule)") }
        guard (1...3650).contains(days) else { throw ValidationError("--days must be from 1 to 3650") }
        let now = Date().timeIntervalSince1970
        let claims = TokenClaims(
            subject: account ?? "admin", scope: admin ? .admin : .account, app: app, issuedAt: now,
            expires: Int64(now) + Int64(days) * 86_400)
        print(try secret().sign(claims))
    }
}

/// `sign-out`: refuses every token of an account issued until now ("sign out everywhere").
struct SignOutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-out",
        abstract: "Refuse every token of an account in an app issued until now (sign out everywhere).")

    @Option(help: "The app.")
    var app: String
    @Option(help: "The account.")
    var account: String
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        guard SyncAPI.isValidName(app), SyncAPI.isValidName(account) else {
            throw ValidationError("the app and the account must be \(SyncAPI.nameRule)")
        }
        let logger = makeLogger()
        let client = PostgresClient(
            configuration: try database.resolved().clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            try await PostgresSchema.migrate(client, logger: logger)
            let store = AccountStore(client: client, logger: logger)
            let cutoff = try await store.signOutEverywhere(
                app: app, account: account, at: Date().timeIntervalSince1970)
            print("\(app)/\(account): tokens issued before \(Date(timeIntervalSince1970: cutoff)) are refused")
            group.cancelAll()
        }
    }
}
