import AccountSync
import ArgumentParser
import Foundation
import OnboardingServer
import ServerSyncAPI
import TourCodec

/// Names one subject of an app: an account, or an install of an app without sign-in.
struct SubjectOptions: ParsableArguments {
    @Option(help: "The app.") var app: String
    @Option(help: "The account (one of --account and --install).") var account: String?
    @Option(help: "The install id enrollment answered (32 hex digits, with or without 'install.').")
    var install: String?

    /// The app and the subject id as the server stores it.
    func resolved() throws -> (String, String) {
        guard SyncAPI.isValidName(app) else { throw ValidationError("the app must be \(SyncAPI.nameRule)") }
        switch (account, install) {
        case (let account?, nil):
            guard SyncAPI.isValidName(account), !Installs.isInstall(account) else {
                throw ValidationError(
                    "the account must be \(SyncAPI.nameRule), not an install's id (use --install)")
            }
            return (app, account)
        case (nil, let install?):
            let bare =
                Installs.isInstall(install)
                ? String(install.dropFirst(Installs.subjectPrefix.count)) : install
            guard bare.count == 32, bare.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
                throw ValidationError("--install takes the 32 lowercase hex digits enrollment answered")
            }
            return (app, Installs.subjectPrefix + bare)
        default:
            throw ValidationError("name one subject: --account ACCOUNT or --install ID")
        }
    }
}

/// `erase`: one subject's data gone, every count corrected (Docs/Privacy.md).
struct EraseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase",
        abstract:
            """
            Erase one account's or install's data in an app and take it out of every count (audited by a \
            keyed hash).
            """
    )
    @OptionGroup var subject: SubjectOptions
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let (app, subject) = try subject.resolved()
        // The audit row names the subject by a keyed hash: the server's key ring is needed.
        let pseudonym = try secret().subjectPseudonym(app: app, subject: subject)
        let summary = try await database.withClient { client, logger in
            try await AccountStore(client: client, logger: logger).erase(
                app: app, subject: subject, pseudonym: pseudonym, by: .commandLine(),
                at: Date().timeIntervalSince1970)
        }
        let rows = summary.removed.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
            separator: ", ")
        print(
            """
            \(app)/\(subject) erased (\(rows.isEmpty ? "nothing was stored" : rows)); \
            its tokens until now are refused
            """
        )
    }
}

/// `export`: one subject's stored data as JSON.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Print one account's or install's stored data in an app as JSON.")
    @OptionGroup var subject: SubjectOptions
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let (app, subject) = try subject.resolved()
        let value = try await database.withClient { client, logger in
            try await AccountStore(client: client, logger: logger).export(app: app, subject: subject)
        }
        print(try value.jsonText())
    }
}

/// `retain-facts`: the retention `serve --retain-facts` runs every minute, now (from cron, or after
/// lowering the limit).
struct RetainFactsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retain-facts",
        abstract:
            """
            Drop the facts of pushes received more than DAYS days ago (counted ones only; every count stays).
            """
    )
    @Option(help: "Days of facts to keep (1 to 36500).") var days: Int
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        guard (1...36_500).contains(days) else { throw ValidationError("--days must be from 1 to 36500") }
        let days = days
        let dropped = try await database.withClient { client, logger in
            try await FactRetention(client: client, logger: logger).run(days: days)
        }
        print(
            """
            dropped \(dropped) fact\(dropped == 1 ? "" : "s") of pushes received more than \(days) day\
            \(days == 1 ? "" : "s") ago
            """
        )
    }
}

/// `flows archive|restore`: a flow off the dashboard's overview, or back on it (audited).
struct FlowsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flows",
        abstract: "Archive a flow (off the dashboard's overview, its numbers kept) or restore it.",
        subcommands: [Archive.self, Restore.self])

    struct Archive: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take a flow off the overview; its app's page and its own page keep its numbers.")
        @Option(help: "The app.") var app: String
        @Option(help: "The flow.") var flow: String
        @OptionGroup var database: DatabaseOptions
        func run() async throws {
            try await FlowsCommand.set(app: app, flow: flow, archived: true, database: database)
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put an archived flow back on the overview.")
        @Option(help: "The app.") var app: String
        @Option(help: "The flow.") var flow: String
        @OptionGroup var database: DatabaseOptions
        func run() async throws {
            try await FlowsCommand.set(app: app, flow: flow, archived: false, database: database)
        }
    }

    static func set(app: String, flow: String, archived: Bool, database: DatabaseOptions) async throws {
        guard SyncAPI.isValidName(app), SyncAPI.isValidName(flow) else {
            throw ValidationError("the app and the flow must be \(SyncAPI.nameRule)")
        }
        let changed = try await database.withClient { client, logger in
            try await FlowArchive(client: client, logger: logger).set(
                app: app, flow: flow, archived: archived, by: .commandLine(), at: Date().timeIntervalSince1970
            )
        }
        let state = archived ? "archived" : "on the overview"
        print(
            changed
                ? "\(app)/\(flow) is \(state) now" : "\(app)/\(flow) was \(state) already; nothing changed")
    }
}
