import TourCore
import TourRuntime

/// A command line of the common grammar as `QuickParse` reads it: what it does, with the values its
/// words gave. Running one is what the argument parser's command of the same name does (`Launch`,
/// `Do`, `Status`, ...): those commands run through here too, so each command is written once.
enum QuickCommand: Equatable {
    case launch(appVersion: String?)
    case show, status, journal, sync
    case action(String, parameters: [String: String])
    case visit(String)
    case signal(String)
    case reset(String?)
    case replay(String?)
    case wait(seconds: Double)
    /// `play`, which runs alone: it starts its own session (``run(_:)``), never as a line of one.
    case play(file: String?, echo: Bool)

    var name: String {
        switch self {
        case .launch: "launch"
        case .show: "show"
        case .status: "status"
        case .journal: "journal"
        case .sync: "sync"
        case .action: "do"
        case .visit: "visit"
        case .signal: "signal"
        case .reset: "reset"
        case .replay: "replay"
        case .wait: "wait"
        case .play: "play"
        }
    }

    /// Runs the command line: in a session of its own for `options`.
    func run(_ options: RunOptions) async throws {
        if case .play(let file, let echo) = self {
            try await Play.run(file: file, echo: echo, options: options)
        } else if case .action(let name, let parameters) = self {
            // From the command line: a secret's value comes from standard input (``SecretArguments``).
            let action = QuickCommand.action(
                name, parameters: try SecretArguments.resolved(action: name, parameters))
            try await Runner.run(options) { try await action.execute($0) }
        } else {
            try await Runner.run(options) { try await execute($0) }
        }
    }

    func execute(_ runner: Runner) async throws {
        switch self {
        case .launch(let version):
            try await runner.launch(version: version)
            try await runner.report(.card)
        case .show: try await runner.report(.card)
        case .status: try await runner.report(.status)
        case .journal: try runner.printJournal()
        case .sync: try await runner.sync()
        case .action(let name, let parameters):
            try await runner.send(.actionPerformed(name, parameters: parameters))
            try await runner.report(.card)
        case .visit(let feature):
            try await runner.send(.featureVisited(feature))
            try await runner.report(.card)
        case .signal(let name):
            try await runner.send(.signal(name))
            try await runner.report(.card)
        case .reset(let flow):
            try await runner.send(.resetRequested(flow.map { FlowID($0) }))
            try await runner.report(.status)
        case .replay(let flow):
            try await runner.send(.replayRequested(flow.map { FlowID($0) }))
            try await runner.report(.card)
        case .wait(let seconds):
            try await RealTimeWait.wait(seconds, runner: runner)
            try await runner.report(.card, unlessUnchanged: true)
        case .play:
            // Never read as a line: `ScriptLine` refuses the commands that run only alone first.
            throw CLIFailure.usage("play runs only alone, not as a line of a script or session")
        }
    }
}

/// The start-up path of a command line, and of each line of `play` and the interactive session,
/// without the argument parser.
///
/// The argument parser builds every command's definition by reflection (`Mirror`, dynamic casts)
/// before it reads a word, and even its property wrappers instantiate generic types at run time;
/// in a process that runs one command and exits, that is the largest part of its start-up
/// (Docs/Performance.md, the cold start), and far more in a debug build. A line of one of
/// the commands above, with its arguments and the common options each spelled plainly (`--user u1`,
/// `--user=u1`, `--json`), is read here into the same values (``QuickCommand``, ``RunOptions``).
/// Anything else (help, an unknown or repeated option, a missing or extra argument, a word that
/// looks like an option, a value the commands' own validation refuses) returns nil, and the
/// argument parser reads the line as before, so every message and every refusal stays its own.
/// `QuickParseTests` checks that both readings agree.
enum QuickParse {
    static func command(_ arguments: [String]) -> (command: QuickCommand, options: RunOptions)? {
        guard let name = arguments.first,
            let (options, extras, positional) = words(Array(arguments.dropFirst())),
            (try? options.validate()) != nil
        else { return nil }
        // A word of a name the argument parser itself answers (`help`) is left to it.
        guard !positional.contains("help") else { return nil }
        let command: QuickCommand
        var takes: Set<String> = []
        switch (name, positional.count) {
        case ("launch", 0):
            let version = extras["app-version"]
            if let version, !AppVersion.isValid(version) { return nil }
            command = .launch(appVersion: version)
            takes = ["app-version"]
        case ("show", 0): command = .show
        case ("status", 0): command = .status
        case ("journal", 0): command = .journal
        case ("sync", 0): command = .sync
        case ("do", 1...):
            guard let parameters = try? Do.parse(Array(positional.dropFirst())) else { return nil }
            command = .action(positional[0], parameters: parameters)
        case ("visit", 1): command = .visit(positional[0])
        case ("signal", 1): command = .signal(positional[0])
        case ("reset", 0...1): command = .reset(positional.first)
        case ("replay", 0...1): command = .replay(positional.first)
        case ("wait", 1):
            guard let seconds = try? Wait.seconds(positional) else { return nil }
            command = .wait(seconds: seconds)
        case ("play", 0...1):
            command = .play(file: positional.first, echo: extras["echo"] != nil)
            takes = ["echo"]
        default: return nil
        }
        return extras.keys.allSatisfy(takes.contains) ? (command, options) : nil
    }

    /// The common options of `words`, the options only some commands take (`--app-version`), and
    /// the positional words; nil when the argument parser should read them.
    static func words(_ words: [String]) -> (RunOptions, extras: [String: String], positional: [String])? {
        var options = RunOptions()
        var seen: Set<String> = []
        var extras: [String: String] = [:]
        var positional: [String] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            guard word.hasPrefix("-") else {
                positional.append(word)
                index += 1
                continue
            }
            guard word.hasPrefix("--"), word.count > 2 else { return nil }
            var name = String(word.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            func value() -> String? {
                // The argument parser reads `--db=` as a missing value, and `--db ""` as an empty one.
                if let inline { return inline.isEmpty ? nil : inline }
                index += 1
                guard index < words.count, !words[index].hasPrefix("-") else { return nil }
                return words[index]
            }
            switch name {
            case "json", "offline":
                guard inline == nil, seen.insert(name).inserted else { return nil }
                if name == "json" { options.json = true } else { options.offline = true }
            case "echo":
                guard inline == nil, seen.insert(name).inserted else { return nil }
                extras[name] = ""
            case "db", "user", "server", "locale", "app-version":
                guard let given = value(), seen.insert(name).inserted else { return nil }
                switch name {
                case "db": options.db = given
                case "user": options.user = given
                case "server": options.server = given
                case "locale": options.locale = given
                default: extras[name] = given
                }
            case "permission", "answer", "context":
                guard let given = value() else { return nil }
                switch name {
                case "permission": options.permissions.append(given)
                case "answer": options.answers.append(given)
                default: options.context.append(given)
                }
            default:
                return nil
            }
            index += 1
        }
        return (options, extras, positional)
    }
}
