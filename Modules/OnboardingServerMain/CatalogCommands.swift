import AccountSync
import ArgumentParser
import Foundation
import Logging
import OnboardingServer
import PostgresNIO
import TourCore

/// Runs `body` with the catalog store on the configured PostgreSQL (migrated first).
func withCatalogStore<T: Sendable>(
    _ database: DatabaseOptions, _ body: @escaping @Sendable (CatalogStore) async throws -> T
) async throws -> T {
    let logger = makeLogger()
    let client = PostgresClient(
        configuration: try database.resolved().clientConfiguration(maximumConnections: 2), backgroundLogger: logger)
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            await client.run()
            return nil
        }
        try await PostgresSchema.migrate(client, logger: logger)
        let result = try await body(CatalogStore(client: client, logger: logger))
        group.cancelAll()
        return result
    }
}

/// The document in `path`, read whole.
func documentText(_ path: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
        throw ValidationError("cannot read a catalog document from '\(path)'")
    }
    return text
}

/// Prints what a register or publish did; a refusal lists every problem and exits 1.
func report(_ outcome: CatalogStore.Outcome, _ verb: String) throws {
    switch outcome {
    case .stored(let entry):
        print(
            "\(entry.app) catalog version \(entry.version) \(verb) (fingerprint \(CatalogDocument.short(entry.fingerprint))"
                + (entry.source == .published ? ", rollout \(entry.rollout)%)" : ")"))
    case .refused(let problems):
        FileHandle.standardError.write(
            Data("onboarding-server: the document is refused, nothing changed (\(problems.count) problem\(problems.count == 1 ? "" : "s")):\n".utf8))
        for problem in problems { FileHandle.standardError.write(Data("  - \(problem)\n".utf8)) }
        throw ExitCode(1)
    }
}

/// `register`: the catalog compiled into a binary of the app, what publications are checked against.
struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Register the catalog compiled into a binary of an app (the document `APP catalog --json` prints).",
        discussion: "Publications are checked against the newest registered binary's vocabulary and every earlier version.")

    @Option(help: "The app.") var app: String
    @Argument(help: "The catalog document.", completion: .file(extensions: ["json"])) var file: String
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        guard SyncAPI.isValidName(app) else { throw ValidationError("the app must be \(SyncAPI.nameRule)") }
        let text = try documentText(file)
        let app = app
        try report(
            try await withCatalogStore(database) { store in
                try await store.register(app: app, text: text, by: "operator", at: Date().timeIntervalSince1970)
            }, "registered as compiled")
    }
}

/// `publish`: a catalog document to a percentage of the app's subjects, without an app release.
struct Publish: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish a catalog document to a percentage of an app's subjects (or change its rollout).",
        discussion: """
            The document is checked as a build checks its catalog: coherent, using only the vocabulary of \
            the newest registered binary, and placing every earlier version's steps. A refused document \
            changes nothing; every problem is listed. Publishing the same document again sets its rollout.
            """)

    @Option(help: "The app.") var app: String
    @Option(help: "The percentage of subjects (accounts or installs) it reaches, 0 to 100.") var rollout: Int = 100
    @Argument(help: "The catalog document.", completion: .file(extensions: ["json"])) var file: String
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard (0...100).contains(rollout) else { throw ValidationError("--rollout is a percentage, 0 to 100") }
    }

    func run() async throws {
        guard SyncAPI.isValidName(app) else { throw ValidationError("the app must be \(SyncAPI.nameRule)") }
        let text = try documentText(file)
        let (app, rollout) = (app, rollout)
        try report(
            try await withCatalogStore(database) { store in
                try await store.publish(app: app, text: text, rollout: rollout, by: "operator", at: Date().timeIntervalSince1970)
            }, "published")
    }
}

/// `unpublish`: withdraws a publication (a rollback).
struct Unpublish: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpublish",
        abstract: "Withdraw a published catalog version: devices return to the newest other one meant for them.")

    @Option(help: "The app.") var app: String
    @Option(help: "The published version to withdraw.") var version: Int
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        guard SyncAPI.isValidName(app) else { throw ValidationError("the app must be \(SyncAPI.nameRule)") }
        let (app, version) = (app, version)
        let withdrawn = try await withCatalogStore(database) { store in
            try await store.withdraw(app: app, version: version, at: Date().timeIntervalSince1970)
        }
        guard withdrawn != nil else {
            FileHandle.standardError.write(Data("onboarding-server: \(app) has no live publication of version \(version)\n".utf8))
            throw ExitCode(1)
        }
        print("\(app) catalog version \(version) withdrawn")
    }
}
