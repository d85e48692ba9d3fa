import ArgumentParser

/// Every command of the common grammar, declared once, in the order `--help` lists them. A new
/// command is one entry here (and its type); everything else derives from this list:
///
/// - the root command's subcommands (so `APP NAME` and `APP help NAME` reach it);
/// - the words a line of `play` or of the interactive session may start with: the commands that
///   conform to ``ScriptableCommand``; the others run only alone;
/// - the session's `help` lines and the unknown-command message with its suggestion.
///
/// `QuickParse` is a faster reading of some of these and optional: a line it does not read goes to
/// the argument parser, so a new command needs nothing there. `CommandListTests` proves each entry
/// is reachable from every path.
enum CommandList {
    struct Entry: Sendable {
        let command: any AsyncParsableCommand.Type
        /// How a session line writes it and what it does, for the session's `help`; nil for a
        /// command that runs only alone.
        let sessionHelp: (usage: String, summary: String)?

        init(_ command: any AsyncParsableCommand.Type, session usage: String? = nil, _ summary: String? = nil)
        {
            self.command = command
            sessionHelp = usage.map { ($0, summary ?? "") }
        }

        var name: String { command.configuration.commandName ?? "" }
        /// Whether it runs as a line of a script or session.
        var isScriptable: Bool { command is any ScriptableCommand.Type }
    }

    static let entries: [Entry] = [
        Entry(Launch.self, session: "launch", "the app starts again"),
        Entry(Show.self, session: "show", "the card showing now"),
        Entry(Do.self, session: "ACTION [KEY=VALUE ...]", "an action on the card (`do ACTION` works too)"),
        Entry(Visit.self, session: "visit FEATURE", "go to a feature"),
        Entry(Signal.self, session: "signal NAME", "the app reports a moment"),
        Entry(Status.self, session: "status", "every flow and the product's state"),
        Entry(Reset.self, session: "reset [FLOW]", "debug reset"),
        Entry(Replay.self, session: "replay [FLOW]", "show a flow again"),
        Entry(Wait.self, session: "wait SECONDS", "time passes"),
        Entry(Sync.self, session: "sync", "push and pull with the account server now"),
        Entry(Play.self),
        Entry(Journal.self, session: "journal", "this user's journal"),
        Entry(Report.self, session: "report", "the funnel across users"),
        Entry(Explain.self, session: "explain [FLOW]", "why each flow shows or not"),
        Entry(Graph.self),
        Entry(Check.self),
        Entry(CatalogCommand.self),
    ]

    /// The argument parser's subcommands of the root command.
    static var types: [any ParsableCommand.Type] { entries.map(\.command) }

    /// Every command's name, in the list's order.
    static let names: [String] = entries.map(\.name)

    /// The commands a line of a script or of the interactive session may start with.
    static let scriptableNames: Set<String> = Set(entries.filter(\.isScriptable).map(\.name))

    /// The commands that run only alone (`catalog`, `check`, `graph`, `play`).
    static let standaloneNames: [String] = entries.filter { !$0.isScriptable }.map(\.name)
}
