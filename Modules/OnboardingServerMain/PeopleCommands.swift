import AccountSync
import ArgumentParser
import Foundation
import InsightsPages
import OnboardingServer
import ServerControlPlane
import TourCodec

/// `people`: the control plane's people, for an operator at the database (Docs/Security.md).
struct PeopleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "people",
        abstract: "Named people with roles per app: add, list, remove, rotate a credential, end sessions.",
        discussion: """
            Roles: viewer (dashboard and reports), editor (catalog checks), publisher (publish, rollout, \
            rollback), owner (the app's people, keys and audit trail). --every-app gives the role in every \
            app (an operator). Each person's credential is revocable on its own (rotate, remove).
            """,
        subcommands: [Add.self, List.self, Remove.self, Rotate.self, EndSessions.self])

    /// Where a role applies.
    struct Scope: ParsableArguments {
        @Option(help: "The app.") var app: String?
        @Flag(help: "Every app (an operator).") var everyApp = false

        /// The scope, which must be given.
        func required() throws -> RoleScope {
            guard let scope = try resolved(required: true) else {
                throw ValidationError("give --app APP or --every-app")
            }
            return scope
        }

        func resolved(required: Bool) throws -> RoleScope? {
            switch (app, everyApp) {
            case (let app?, false):
                guard SyncAPI.isValidName(app) else {
                    throw ValidationError("the app must be \(SyncAPI.nameRule)")
                }
                return .app(app)
            case (nil, true): return .everyApp
            case (nil, false):
                if required { throw ValidationError("give --app APP or --every-app") }
                return nil
            case (_?, true): throw ValidationError("give --app APP or --every-app, not both")
            }
        }
    }

    /// Prints a new credential: to `--credential-file` (mode 0600) when given, else to standard output.
    static func hand(_ credential: PersonCredential, to file: String?) async throws {
        let text = try await secret().sign(credential.claims)
        guard let file else {
            print(text)
            return
        }
        try writeSecretFile(file, text + "\n")
        note("the credential is in \(file) (readable by you only)")
    }

    static func validDays(_ days: Int) throws {
        guard (1...PeopleStore.maximumDays).contains(days) else {
            throw ValidationError("--days must be from 1 to \(PeopleStore.maximumDays)")
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a person a role (adding them, with a credential printed once, when new).")

        @Option(help: "The person's name.") var name: String
        @Option(help: "viewer, editor, publisher or owner.") var role: String
        @OptionGroup var scope: Scope
        @Option(help: "The identity provider's claim that signs them in (their email).") var identity: String?
        @Option(help: "How long a new credential lasts, in days.") var days = PeopleStore.defaultDays
        @Option(help: "Write a new credential to this file (mode 0600) instead of standard output.")
        var credentialFile: String?
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            guard PeopleStore.isValidName(name) else {
                throw ValidationError("the name must be \(SyncAPI.nameRule)")
            }
            guard let role = Role(rawValue: role) else {
                throw ValidationError("--role is one of \(Role.names)")
            }
            if let identity, identity.isEmpty || identity.count > 320 {
                throw ValidationError("--identity is 1 to 320 characters")
            }
            try PeopleCommand.validDays(days)
            let scope = try scope.required()
            let _ = try secret()
            let (name, identity, days) = (name, identity, days)
            let (person, credential) = try await database.withClient { client, logger in
                try await PeopleStore(client: client, logger: logger).grant(
                    role, in: scope, to: name, identity: identity, days: days, by: .commandLine(),
                    now: Date().timeIntervalSince1970)
            }
            note("\(person.name) is \(role.rawValue) of \(scope)")
            if let credential {
                try await PeopleCommand.hand(credential, to: credentialFile)
            } else {
                note(
                    """
                    \(person.name) already had a credential; `onboarding-server people rotate --name \
                    \(person.name)` issues a new one
                    """
                )
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List people, their roles and credentials (never a credential's text).")
        @Option(help: "Only people with a role in this app (and operators).") var app: String?
        @Flag(help: "As JSON.") var json = false
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            if let app, !SyncAPI.isValidName(app) {
                throw ValidationError("the app must be \(SyncAPI.nameRule)")
            }
            let app = app
            let people = try await database.withClient { client, logger in
                try await PeopleStore(client: client, logger: logger).list(app: app)
            }
            let now = Date().timeIntervalSince1970
            if json {
                print(
                    try TourValue.list(
                        people.map { person in
                            .members([
                                "name": .string(person.name),
                                "identity": person.identity.map(TourValue.string),
                                "roles": .object(
                                    Dictionary(
                                        uniqueKeysWithValues: person.roles.map {
                                            ("\($0.key)", TourValue.string($0.value.rawValue))
                                        })),
                                "liveCredentials": .int(
                                    person.credentials.filter { $0.revokedAt == nil && $0.expiresAt > now }
                                        .count),
                            ])
                        }
                    ).jsonText())
                return
            }
            if people.isEmpty { print("no people\(app.map { " in \($0)" } ?? "")") }
            for person in people {
                let roles = person.roles.sorted { "\($0.key)" < "\($1.key)" }.map {
                    "\($0.value.rawValue) of \($0.key)"
                }
                let live = person.credentials.filter { $0.revokedAt == nil && $0.expiresAt > now }
                print(
                    """
                    \(person.name): \(roles.joined(separator: ", "))\
                    \(person.identity.map { "; signs in as \($0)" } ?? ""); 
                    """
                        + "\(live.count) live credential\(live.count == 1 ? "" : "s")")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                """
                Take a person's role away (with --app or --every-app), or the person altogether: \
                credentials and sessions end at once.
                """
        )
        @Option(help: "The person's name.") var name: String
        @OptionGroup var scope: Scope
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let scope = try scope.resolved(required: false)
            let name = name
            let removed = try await database.withClient { client, logger in
                try await PeopleStore(client: client, logger: logger).remove(
                    name, from: scope, by: .commandLine(), now: Date().timeIntervalSince1970)
            }
            guard let removed else { throw Refusal("there is no person named \(name)") }
            if let scope, removed.roles[scope] == nil { throw Refusal("\(name) holds no role in \(scope)") }
            print(
                scope.map { "\(name) holds no role in \($0) any more" }
                    ?? "\(name) is removed: every credential and session ended")
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke every credential of a person and issue a new one (their sessions end).")
        @Option(help: "The person's name.") var name: String
        @Option(help: "How long the new credential lasts, in days.") var days = PeopleStore.defaultDays
        @Option(help: "Write the credential to this file (mode 0600) instead of standard output.")
        var credentialFile: String?
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            try PeopleCommand.validDays(days)
            let _ = try secret()
            let (name, days) = (name, days)
            let credential = try await database.withClient { client, logger in
                try await PeopleStore(client: client, logger: logger).rotate(
                    name, days: days, by: .commandLine(), now: Date().timeIntervalSince1970)
            }
            guard let credential else { throw Refusal("there is no person named \(name)") }
            note("\(name)'s earlier credentials are revoked")
            try await PeopleCommand.hand(credential, to: credentialFile)
        }
    }

    struct EndSessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "end-sessions",
            abstract: "End every dashboard session of a person (they sign in again).")
        @Option(help: "The person's name.") var name: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let name = name
            let ended = try await database.withClient { client, logger in
                try await PeopleStore(client: client, logger: logger).endSessions(
                    of: name, app: nil, by: .commandLine(), now: Date().timeIntervalSince1970)
            }
            print("\(ended) session\(ended == 1 ? "" : "s") of \(name) ended")
        }
    }
}

/// `audit`: the control plane's audit trail, newest first, and its hash chain checked.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Print the audit trail (newest first), or check that no row was changed (--verify).")

    @Option(help: "Only acts on this app (and acts on every app).") var app: String?
    @Option(help: "Only acts of this person.") var person: String?
    @Option(help: "At most this many rows.") var limit = 100
    @Option(help: "text, json or csv.") var format = "text"
    @Flag(help: "Check every row's hash against the one before it.") var verify = false
    @Option(
        help: ArgumentHelp(
            "With --verify: a file of anchors (ROW HASH lines) kept where the database's owner cannot write.",
            discussion:
                "Each anchor must still match its row (no row rewritten or cut); the current head is added."))
    var anchors: String?
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard ["text", "json", "csv"].contains(format) else {
            throw ValidationError("--format is text, json or csv")
        }
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit is 1 to 10000") }
        if let app, !SyncAPI.isValidName(app) { throw ValidationError("the app must be \(SyncAPI.nameRule)") }
    }

    func run() async throws {
        if verify {
            let anchorsFile = anchors
            let kept: [(Int64, String)] =
                try anchorsFile.map { path in
                    guard FileManager.default.fileExists(atPath: path) else { return [] }
                    return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap
                    { line in
                        let parts = line.split(separator: " ")
                        guard parts.count == 2, let id = Int64(parts[0]) else { return nil }
                        return (id, String(parts[1]))
                    }
                } ?? []
            let (rows, broken, mismatched, head) = try await database.withClient { client, logger in
                let audit = AuditLog(client: client, logger: logger)
                let (rows, broken) = try await audit.verify()
                var mismatched: [Int64] = []
                for (id, hash) in kept where try await audit.hash(of: id) != hash { mismatched.append(id) }
                return (rows, broken, mismatched, try await audit.head())
            }
            if let broken {
                note(
                    """
                    onboarding-server: the audit trail is broken at row \(broken): it, or the row before it, \
                    was changed, removed or inserted
                    """
                )
                throw ExitCode(1)
            }
            if let first = mismatched.first {
                note(
                    """
                    onboarding-server: the audit trail was rewritten or cut: row \(first) no longer has the \
                    hash its anchor kept (\(mismatched.count) anchor\(mismatched.count == 1 ? "" : "s") \
                    differ)
                    """
                )
                throw ExitCode(1)
            }
            print(
                """
                the audit trail's \(rows) rows are intact\
                \(kept.isEmpty ? "" : ", and match \(kept.count) anchor\(kept.count == 1 ? "" : "s")")
                """
            )
            if let head {
                print("head: row \(head.id) \(head.hash)")
                if let anchorsFile, kept.last?.0 != head.id {
                    if !FileManager.default.fileExists(atPath: anchorsFile) {
                        _ = FileManager.default.createFile(atPath: anchorsFile, contents: nil)
                    }
                    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: anchorsFile))
                    handle.seekToEndOfFile()
                    handle.write(Data("\(head.id) \(head.hash)\n".utf8))
                    try handle.close()
                }
            }
            return
        }
        let filter = AuditLog.Filter(apps: app.map { [$0] }, actor: person, limit: limit)
        let entries = try await database.withClient { client, logger in
            try await AuditLog(client: client, logger: logger).list(filter)
        }
        switch format {
        case "json": print(try TourValue.list(entries.map(\.tourValue)).jsonText())
        case "csv":
            let table = CSVTable(
                header: ["id", "time", "actor", "source", "app", "action", "target", "details"],
                rows: entries.map { entry in
                    [
                        .number(Int(entry.id)), .text(ISOTime.wholeSeconds(entry.at)),
                        .text(entry.actor), .text(entry.source), .text(entry.app ?? ""), .text(entry.action),
                        .text(entry.target ?? ""),
                        .text(entry.details),
                    ]
                })
            print(table.text, terminator: "")
        default:
            for entry in entries {
                let time = ISOTime.wholeSeconds(entry.at)
                print(
                    "#\(entry.id) \(time) \(entry.actor) from \(entry.source): \(entry.action)"
                        + """
                        \(entry.target.map { " \($0)" } ?? "") (\(entry.app ?? "every app")) \
                        \(entry.details)
                        """
                )
            }
        }
    }
}
