import ArgumentParser
import Permissions

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Options every command takes.
struct CommonOptions: ParsableArguments {
    @Option(
        help:
            """
            The SQLite database file (default: $ONBOARDING_DB, else a per-product file in the XDG data \
            directory).
            """,
        completion: .file())
    var db: String?

    @Option(help: "The user the onboarding belongs to.")
    var user: String = "default"

    @Flag(
        help:
            """
            Print one JSON document instead of text (errors too: {\"error\": {...}}); \
            play and sessions print JSON Lines.
            """
    )
    var json = false

    @Option(
        name: .customLong("permission"),
        help: ArgumentHelp(
            "A permission's status before any request, NAME=STATUS. Repeatable. \(Self.permissionHelp)",
            valueName: "name=status"),
        completion: .list(Self.pairs(statuses: PermissionStatus.allCases.map(\.rawValue), gates: false)))
    var permissions: [String] = []

    @Option(
        name: .customLong("answer"),
        help: ArgumentHelp(
            """
            What the user (or a service) answers when asked, NAME=STATUS. Repeatable. Default: granted. \
            \(Self.answerHelp)
            """,
            valueName: "name=status"),
        completion: .list(Self.pairs(statuses: PermissionStatus.allCases.map(\.rawValue), gates: true)))
    var answers: [String] = []

    @Flag(
        help:
            """
            The device has no network: connection attempts fail, and what the account server would get waits \
            in the outbox.
            """
    )
    var offline = false

    @Option(help: ArgumentHelp("\(Self.serverHelp)", valueName: "url"))
    var server: String?

    @Option(
        name: .customLong("context"),
        help: ArgumentHelp(
            "A fact about the device the app reports, KEY=VALUE. Repeatable. \(Self.contextHelp)",
            valueName: "key=value"),
        completion: .list(Self.contextPairs))
    var context: [String] = []

    @Option(
        help: ArgumentHelp(
            """
            The language of the cards, as a tag such as pt-BR (default: $LC_ALL, $LC_MESSAGES or $LANG). \
            A locale without texts falls back: pt-BR, then pt, then the catalog's source locale. \
            \(Self.localeHelp)
            """,
            valueName: "tag"))
    var locale: String?

    @Option(
        help: ArgumentHelp(
            """
            Whether analytics facts may leave the device, on or off (kept in the file from this command on; \
            default on). Off: syncing sends only what the account's records and budget need \
            (Docs/Privacy.md).
            """,
            valueName: "on|off"))
    var analytics: String?

    /// The values read, as the runner takes them.
    var run: RunOptions {
        RunOptions(
            db: db, user: user, json: json, permissions: permissions, answers: answers, offline: offline,
            server: server, context: context, locale: locale, analytics: analytics)
    }

    func validate() throws { try run.validate() }

    static var contextHelp: String { RunOptions.contextHelp }
    static var serverHelp: String { RunOptions.serverHelp }
    static var localeHelp: String { RunOptions.localeHelp }
    static var contextPairs: [String] { RunOptions.contextPairs }
    static var permissionHelp: String { RunOptions.permissionHelp }
    static var answerHelp: String { RunOptions.answerHelp }
    static func pairs(statuses: [String], gates: Bool) -> [String] {
        RunOptions.pairs(statuses: statuses, gates: gates)
    }
}
