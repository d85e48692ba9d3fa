import ArgumentParser
import Foundation
import Logging
import OnboardingServer
import PostgresNIO

/// `onboarding-server`: the account server, its migrations and its tokens.
@main
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "onboarding-server",
        abstract: "The account server: onboarding state that follows a user across devices.",
        discussion: """
            Environment: DATABASE_URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE), \
            ONBOARDING_SERVER_SECRET (at least 32 bytes; signs tokens; never a flag), HOST, PORT, LOG_LEVEL.
            """,
        version: OnboardingServerVersion.text,
        subcommands: [Serve.self, Migrate.self, Token.self], defaultSubcommand: Serve.self)
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

func secret() throws -> TokenSigner {
    guard let secret = ProcessInfo.processInfo.environment["ONBOARDING_SERVER_SECRET"] else {
        throw ValidationError("set ONBOARDING_SERVER_SECRET (at least \(TokenSigner.minimumSecretLength) bytes)")
    }
    do { return try TokenSigner(secret: secret) } catch { throw ValidationError(error.description) }
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
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let port = try port ?? environment["PORT"].map { text in
            guard let port = Int(text) else { throw ValidationError("PORT must be a number from 1 to 65535") }
            return port
        } ?? 8080
        guard (1...65535).contains(port) else { throw ValidationError("the port must be from 1 to 65535") }
        guard (1...1000).contains(connections) else { throw ValidationError("--connections must be from 1 to 1000") }
        let configuration = ServerConfiguration(
            host: host ?? environment["HOST"] ?? "127.0.0.1", port: port, database: try database.resolved(),
            tokens: try secret(), maximumConnections: connections)
        try await OnboardingServer.run(configuration, logger: makeLogger())
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply the schema's migrations and exit.")
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let logger = makeLogger()
        let client = PostgresClient(
            configuration: try database.resolved().clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            let applied = try await PostgresSchema.migrate(client, logger: logger)
            print(applied.isEmpty ? "the schema is up to date" : "applied: \(applied.joined(separator: ", "))")
            group.cancelAll()
        }
    }
}

struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mint a token signed with $ONBOARDING_SERVER_SECRET and print it.")

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
        guard (1...3650).contains(days) else { throw ValidationError("--days must be from 1 to 3650") }
        let claims = TokenClaims(
            subject: account ?? "admin", scope: admin ? .admin : .account,
            expires: Int64(Date().timeIntervalSince1970) + Int64(days) * 86_400)
        print(try secret().sign(claims))
    }
}


