import AccountSync
import ArgumentParser
import Foundation
import OnboardingServer
import ServerSyncAPI
import TourCodec

/// `enrollment-keys`: the keys with which installs of an app without sign-in enroll (Docs/Server.md,
/// "Installs"). A key is public (compiled into the app; it says which app an install belongs to,
/// nothing more), so adding and retiring are about which builds may enroll: add the new key before
/// the build that carries it ships, retire the old one when its builds are gone. Each act is a row
/// of the audit trail.
struct EnrollmentKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enrollment-keys",
        abstract: "The keys with which installs of an app without sign-in enroll: add, retire, list.",
        subcommands: [Add.self, Retire.self, List.self])

    static func checked(app: String, key: String?) throws -> (String, String?) {
        guard SyncAPI.isValidName(app) else { throw ValidationError("the app must be \(SyncAPI.nameRule)") }
        if let key, !Installs.isValidKey(key) {
            throw ValidationError("an enrollment key is \(Installs.keyRule)")
        }
        return (app, key)
    }

    /// The app and a key that must be given, checked.
    static func checked(app: String, key: String) throws -> (String, String) {
        _ = try checked(app: app, key: Optional(key))
        return (app, key)
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                """
                Accept a key for an app's enrollments (the one its build compiles in: \
                its Registration.swift, Docs/Server.md lists them).
                """
        )
        @Option(help: "The app.") var app: String
        @Argument(help: "The key.") var key: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let (app, key) = try EnrollmentKeysCommand.checked(app: app, key: key)
            try await database.withClient { client, logger in
                try await EnrollmentStore(client: client, logger: logger).add(
                    app: app, key: key, by: .commandLine(), at: Date().timeIntervalSince1970)
            }
            print("\(app) enrolls installs with \(key)")
        }
    }

    struct Retire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Stop accepting a key for new enrollments (installs enrolled with it keep their credentials)."
        )
        @Option(help: "The app.") var app: String
        @Argument(help: "The key.") var key: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let (app, key) = try EnrollmentKeysCommand.checked(app: app, key: key)
            let retired = try await database.withClient { client, logger in
                try await EnrollmentStore(client: client, logger: logger).retire(
                    app: app, key: key, by: .commandLine(), at: Date().timeIntervalSince1970)
            }
            print(
                retired
                    ? "\(app) no longer enrolls installs with \(key)"
                    : "\(key) is not a live enrollment key of \(app); nothing changed")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's enrollment keys.")
        @Option(help: "The app.") var app: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let (app, _) = try EnrollmentKeysCommand.checked(app: app, key: nil)
            let keys = try await database.withClient { client, logger in
                try await EnrollmentStore(client: client, logger: logger).keys(app: app)
            }
            if keys.isEmpty { print("\(app) has no enrollment key: its installs cannot enroll") }
            for key in keys {
                let added = ISOTime.wholeSeconds(key.addedAt)
                let retired = key.retiredAt.map { " · retired \(ISOTime.wholeSeconds($0))" } ?? ""
                print("\(key.key) · added \(added)\(retired)")
            }
        }
    }
}
