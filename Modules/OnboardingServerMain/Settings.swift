import AccountSync
import ArgumentParser
import Foundation
import Logging
import OnboardingServer
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import ServerTokens

#if canImport(Glibc)
    import Glibc
#endif

/// Settings that hold secrets come from the environment or from a file the environment names
/// (`NAME_FILE`), never from a command-line argument: arguments show to everyone who runs `ps`.
enum Settings {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// `NAME`, or the content of the file `NAME_FILE` names (one trailing new line dropped); nil
    /// when neither is set. Both set is refused: which one wins would be a guess.
    static func secret(_ name: String) throws -> String? {
        let direct = environment[name].flatMap { $0.isEmpty ? nil : $0 }
        let file = environment[name + "_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        switch (direct, file) {
        case (nil, nil): return nil
        case (let value?, nil): return value
        case (nil, let path?):
            guard let data = FileManager.default.contents(atPath: path),
                var text = String(data: data, encoding: .utf8)
            else {
                throw Refusal("\(name)_FILE names no readable file: \(path)")
            }
            while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
            guard !text.isEmpty else { throw Refusal("\(name)_FILE names an empty file: \(path)") }
            return text
        case (_?, _?):
            throw Refusal("set \(name) or \(name)_FILE, not both")
        }
    }

    /// A URL the server fetches from: https, or http to this machine (development and tests).
    static func fetchableURL(_ text: String, _ name: String) throws -> URL {
        guard let url = URL(string: text), let host = url.host, !host.isEmpty,
            url.scheme == "https"
                || (url.scheme == "http" && ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host))
        else {
            throw ValidationError(
                "\(name) must be an https URL (http only to this machine), got '\(text.prefix(200))'")
        }
        return url
    }
}

/// Where the database is: `DATABASE_URL` or `DATABASE_URL_FILE`. The URL carries the password, so
/// the `--database-url` flag of earlier releases is refused with the replacement named.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"), help: .hidden)
    var refusedDatabaseURL: String?

    func validate() throws {
        if refusedDatabaseURL != nil {
            throw ValidationError(
                """
                --database-url is no longer accepted: a URL with a password on the command line shows to \
                everyone who runs ps. Set DATABASE_URL, or DATABASE_URL_FILE to a file that holds it
                """
            )
        }
    }

    func resolved() throws -> DatabaseURL {
        guard let text = try Settings.secret("DATABASE_URL") else {
            throw Refusal(
                """
                no database: set DATABASE_URL (or DATABASE_URL_FILE, a file holding it) to \
                postgres://USER:PASSWORD@HOST:PORT/DATABASE
                """
            )
        }
        let url: DatabaseURL
        do { url = try DatabaseURL(text) } catch { throw Refusal(error.description) }
        // A standby takes no writes: that is READ_DATABASE_URL's setting, never the primary's.
        guard url.targetSessionAttributes != "standby" else {
            throw Refusal(
                """
                DATABASE_URL: target_session_attrs=standby takes no writes; the primary's URL takes any or \
                read-write (standby is for READ_DATABASE_URL)
                """
            )
        }
        return url
    }

    /// How long a command waits for PostgreSQL to answer before it gives up and says so.
    static let commandDatabaseWait: Duration = .seconds(15)

    /// A pool's own logger for a command: its warnings and errors only (it logs every failed
    /// connection attempt at info, a line per attempt while PostgreSQL does not answer).
    static func poolLogger(_ logger: Logger) -> Logger {
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .warning)
        return quiet
    }

    /// Runs `body` with a pool on the database, migrated first.
    func withClient<T: Sendable>(_ body: @escaping @Sendable (PostgresClient, Logger) async throws -> T)
        async throws -> T
    {
        let logger = makeLogger()
        // A URL of several hosts: the one that answers as it asks (the primary after a failover).
        var url = try resolved()
        if url.hosts.count > 1, let picked = await DatabaseFailover.pick(url, logger: logger) {
            url = url.using(picked)
        }
        let client = PostgresClient(
            configuration: url.clientConfiguration(maximumConnections: 2),
            backgroundLogger: Self.poolLogger(logger))
        return try await client.running {
            try await client.waitUntilAnswering(within: Self.commandDatabaseWait, logger: logger)
            try await PostgresSchema.migrate(client, logger: logger)
            return try await body(client, logger)
        }
    }
}

/// The key ring: `ONBOARDING_SERVER_KEYS` (several keys, the first signs), else the one key of
/// `ONBOARDING_SERVER_SECRET` (id `default`); each also from a file (`…_FILE`). Never from a flag.
func secret() throws -> TokenSigner {
    do {
        if let ring = try Settings.secret("ONBOARDING_SERVER_KEYS") { return try TokenSigner(keyRing: ring) }
        guard let secret = try Settings.secret("ONBOARDING_SERVER_SECRET") else {
            throw ServerConfigurationError(
                """
                set ONBOARDING_SERVER_SECRET (at least \(TokenSigner.minimumSecretLength) bytes) or \
                ONBOARDING_SERVER_SECRET_FILE, or ONBOARDING_SERVER_KEYS
                """
            )
        }
        return try TokenSigner(secret: secret)
    } catch let error as Refusal { throw error } catch { throw Refusal("\(error)") }
}

/// The identity provider of account tokens: `ONBOARDING_IDP_ISSUER` with `ONBOARDING_IDP_JWKS_URL`
/// (fetched, cached, fetched again when the provider rotates) or `ONBOARDING_IDP_JWKS` (a file).
func identityProvider() throws -> IdentityProviderSettings? {
    let environment = Settings.environment
    let url = environment["ONBOARDING_IDP_JWKS_URL"].flatMap { $0.isEmpty ? nil : $0 }
    let file = environment["ONBOARDING_IDP_JWKS"].flatMap { $0.isEmpty ? nil : $0 }
    let issuer = environment["ONBOARDING_IDP_ISSUER"].flatMap { $0.isEmpty ? nil : $0 }
    switch (issuer, url, file) {
    case (nil, nil, nil): return nil
    case (let issuer?, let url?, nil):
        return IdentityProviderSettings(
            issuer: issuer, keys: .url(try Settings.fetchableURL(url, "ONBOARDING_IDP_JWKS_URL")))
    case (let issuer?, nil, let file?): return IdentityProviderSettings(issuer: issuer, keys: .file(file))
    default:
        throw Refusal(
            """
            an identity provider needs ONBOARDING_IDP_ISSUER and one of ONBOARDING_IDP_JWKS_URL (its keys' \
            URL) or ONBOARDING_IDP_JWKS (a file)
            """
        )
    }
}

/// Sign-in to the dashboard through OpenID Connect: `ONBOARDING_OIDC_ISSUER`, `_CLIENT_ID`,
/// `_CLIENT_SECRET` (or `_FILE`), `_CLAIM` (default `email`) and `ONBOARDING_PUBLIC_URL`.
func oidc(publicURL: String?) throws -> OIDCConfiguration? {
    let environment = Settings.environment
    guard let issuer = environment["ONBOARDING_OIDC_ISSUER"].flatMap({ $0.isEmpty ? nil : $0 }) else {
        return nil
    }
    _ = try Settings.fetchableURL(issuer, "ONBOARDING_OIDC_ISSUER")
    guard let client = environment["ONBOARDING_OIDC_CLIENT_ID"].flatMap({ $0.isEmpty ? nil : $0 }),
        let secret = try Settings.secret("ONBOARDING_OIDC_CLIENT_SECRET")
    else {
        throw Refusal(
            """
            ONBOARDING_OIDC_ISSUER needs ONBOARDING_OIDC_CLIENT_ID and ONBOARDING_OIDC_CLIENT_SECRET (or \
            _FILE)
            """
        )
    }
    guard let publicURL else {
        throw Refusal(
            """
            ONBOARDING_OIDC_ISSUER needs ONBOARDING_PUBLIC_URL, the dashboard's address as browsers reach it \
            (the provider sends people back there)
            """
        )
    }
    return OIDCConfiguration(
        issuer: issuer, clientID: client, clientSecret: secret,
        claim: environment["ONBOARDING_OIDC_CLAIM"] ?? "email",
        publicURL: publicURL)
}

/// The process's logger (swift-log is set up once per process, on first use).
let processLogger: Logger = {
    LoggingSystem.bootstrap(StreamLogHandler.standardError)
    var logger = Logger(label: "onboarding-server")
    let level = Settings.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:))
    logger.logLevel = level ?? .info
    return logger
}()

func makeLogger() -> Logger { processLogger }

/// Writes a secret (a credential, a private key) to a new file readable by its owner only: created
/// with mode 0600 and `O_EXCL` in one call, so it is never readable by others, not even for a moment,
/// and never overwrites a file.
func writeSecretFile(_ path: String, _ text: String) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
        throw Refusal(
            errno == EEXIST
                ? "\(path) exists; a secret file is never overwritten (remove it first)"
                : "cannot create \(path) (errno \(errno))")
    }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    try handle.write(contentsOf: Data(text.utf8))
    try handle.close()
}

/// One line on standard error.
func note(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
