import ArgumentParser
import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A command that can run alone or as a line of `play` and the interactive session.
protocol ScriptableCommand: AsyncParsableCommand {
    var options: CommonOptions { get }
    func execute(_ runner: Runner) async throws
}

extension ScriptableCommand {
    func run() async throws {
        try await Runner.run(options.run) { try await execute($0) }
    }
}

/// Every command names itself in its configuration: without a name the argument parser derives one
/// with `String(describing:)` of the type, a dynamic cast per command on every start-up.
struct RootCommand: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        let cli = CLIEnvironment.current
        return CommandConfiguration(
            commandName: cli.executable,
            abstract:
                """
                \(cli.displayName)'s first run, headless: its \(cli.catalog.flowNoun), step by step, \
                in a terminal.
                """,
            discussion: cli.text("root") { ProductHelp.root(cli) },
            version: "\(cli.executable) \(OnboardingVersion.current)",
            subcommands: CommandList.types)
    }

    @OptionGroup var options: CommonOptions

    func run() async throws {
        try await Runner.run(options.run) { runner in
            try await Interactive(runner: runner).run()
        }
    }
}

struct Launch: ScriptableCommand {
    static let configuration = CommandConfiguration(
        commandName: "launch",
        abstract:
            "The app starts: triggers are evaluated, interrupted flows resume or restart by their policy.")
    @OptionGroup var options: CommonOptions
    @Option(
        name: .customLong("app-version"),
        help: "The app version launching (default: the product's current version).")
    var appVersion: String?

    func validate() throws {
        if let appVersion, !AppVersion.isValid(appVersion) {
            throw ValidationError(
                """
                --app-version must be \(AppVersion.rule); got '\(appVersion.quotable)' (\(appVersion.count) \
                characters)
                """
            )
        }
    }

    func execute(_ runner: Runner) async throws {
        try await QuickCommand.launch(appVersion: appVersion).execute(runner)
    }
}

struct Show: ScriptableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print the card showing now.")
    @OptionGroup var options: CommonOptions

    func execute(_ runner: Runner) async throws { try await QuickCommand.show.execute(runner) }
}

struct Do: ScriptableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "do",
            abstract: "A user action on the card showing: next, back, skip, or the step's own.",
            discussion: CLIEnvironment.current.text("do") { ActionHelp.text(for: CLIEnvironment.current) })
    }
    @OptionGroup var options: CommonOptions
    @Argument(
        help:
            "The action, such as \(ProductHelp.examples(CLIEnvironment.product?.catalog.actionNames ?? [])).",
        completion: .list(CLIEnvironment.product?.catalog.actionNames ?? []))
    var action: String
    @Argument(help: "The action's parameters, KEY=VALUE.") var parameters: [String] = []

    func validate() throws {
        _ = try Self.parse(parameters)
    }

    static func parse(_ pairs: [String]) throws -> [String: String] {
        var result: [String: String] = [:]
        for pair in pairs {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                // `passwordhunter2`: a secret's value with its `=` forgotten is still a secret.
                let quoted = Output.redactor.redactWord(pair)
                throw ValidationError("parameters are written KEY=VALUE; got '\(quoted.quotable)'")
            }
            result[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        return result
    }

    func execute(_ runner: Runner) async throws {
        try await QuickCommand.action(action, parameters: try Self.parse(parameters)).execute(runner)
    }

    /// From the command line (not a line of a session or script): a secret's value is read from
    /// standard input (``SecretArguments``).
    func run() async throws {
        let parameters = try SecretArguments.resolved(action: action, try Self.parse(parameters))
        try await Runner.run(options.run) {
            try await QuickCommand.action(action, parameters: parameters).execute($0)
        }
    }
}

/// A secret parameter of an action on the command line (Carrier Wave's `password`): a value typed
/// there stays in the shell's history and in every process list while the command runs, so it is
/// refused. The secret comes from the environment instead: `ONBOARDING_SECRET_PASSWORD`, or a file
/// named by `ONBOARDING_SECRET_PASSWORD_FILE` (its first line), for an action that takes it and
/// does not name it; `NAME=-` reads it from one line of standard input (or from the environment
/// when set there). The lines of a session or a script are not a command line and take the value
/// as written; every output redacts it either way.
enum SecretArguments {
    static func resolved(action: String, _ parameters: [String: String]) throws -> [String: String] {
        let secrets = Output.redactor.keys
        let catalog = CLIEnvironment.current.catalog
        let steps = catalog.flows.flatMap(\.steps)
        let filled = Set(steps.flatMap(\.actions).filter { $0.name == action }.flatMap(\.fills)).filter {
            secrets.contains($0.lowercased())
        }
        var resolved = parameters
        for name in filled where parameters[name] == nil {
            if let value = try fromEnvironment(name) { resolved[name] = value }
        }
        // An empty value has nothing to keep (and the step's own rule refuses it).
        for (name, value) in parameters where secrets.contains(name.lowercased()) && !value.isEmpty {
            guard value == "-" else {
                throw CLIFailure.usage(
                    """
                    \(name) is a secret: typed on the command line it stays in the shell's history and the \
                    process list. Set \(variable(name)) (or \(variable(name))_FILE, \
                    a file holding it) and leave it out, or give it the value - and the secret on standard \
                    input, or send the line in a session or with play
                    """
                )
            }
            if let value = try fromEnvironment(name) {
                resolved[name] = value
            } else if let line = readLine(strippingNewline: true), !line.isEmpty {
                resolved[name] = line
            } else {
                throw CLIFailure.usage("\(name)=- reads the value from standard input, which held none")
            }
        }
        return resolved
    }

    /// `ONBOARDING_SECRET_` and the name in capitals, letters and digits kept, the rest `_`.
    static func variable(_ name: String) -> String {
        "ONBOARDING_SECRET_" + String(name.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    /// The secret from `VARIABLE`, else the first line of the file `VARIABLE_FILE` names.
    private static func fromEnvironment(_ name: String) throws -> String? {
        if let value = Environment.value(variable(name)), !value.isEmpty { return value }
        guard let path = Environment.value(variable(name) + "_FILE"), !path.isEmpty else { return nil }
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw CLIFailure.usage("\(variable(name))_FILE names '\(path.quotable)', which cannot be read")
        }
        let line =
            String(decoding: contents, as: UTF8.self).split(maxSplits: 1, whereSeparator: \.isNewline).first
            .map(String.init) ?? ""
        guard !line.isEmpty else { throw CLIFailure.usage("\(variable(name))_FILE names an empty file") }
        return line
    }
}

struct Visit: ScriptableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "visit",
            abstract: "The user navigates to a feature or screen.",
            discussion: ProductHelp.listing(
                "Features", CLIEnvironment.current.catalog.features,
                none: "\(CLIEnvironment.current.displayName) has no features to visit."))
    }
    @OptionGroup var options: CommonOptions
    @Argument(
        help: "The feature\(ProductHelp.suffix(CLIEnvironment.product?.catalog.features ?? [])).",
        completion: .list(CLIEnvironment.product?.catalog.features ?? []))
    var feature: String

    func execute(_ runner: Runner) async throws { try await QuickCommand.visit(feature).execute(runner) }
}

struct Signal: ScriptableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "signal",
            abstract:
                """
                The app reports a moment that can start \
                \(CLIEnvironment.current.catalog.flowNoun.withArticle).
                """,
            discussion: ProductHelp.listing(
                "Signals", CLIEnvironment.current.catalog.signals,
                none: "\(CLIEnvironment.current.displayName) reports no signals."))
    }
    @OptionGroup var options: CommonOptions
    @Argument(
        help: "The signal\(ProductHelp.suffix(CLIEnvironment.product?.catalog.signals ?? [])).",
        completion: .list(CLIEnvironment.product?.catalog.signals ?? []))
    var name: String

    func execute(_ runner: Runner) async throws { try await QuickCommand.signal(name).execute(runner) }
}

struct Status: ScriptableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Every flow for the user, the product's domain state, and the database file.")
    @OptionGroup var options: CommonOptions

    func execute(_ runner: Runner) async throws { try await QuickCommand.status.execute(runner) }
}

struct Reset: ScriptableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Debug reset: the flow (default: every flow) is as if never shown. Domain state is kept.")
    @OptionGroup var options: CommonOptions
    @Argument(
        help: "One flow\(ProductHelp.suffix(ProductHelp.flowNames(replayable: false))).",
        completion: .list(ProductHelp.flowNames(replayable: false)))
    var flow: String?

    func execute(_ runner: Runner) async throws { try await QuickCommand.reset(flow).execute(runner) }
}

struct Replay: ScriptableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract:
            "Show a flow again, with the product's replay semantics (\"Show App Tour\", \"Replay Tutorial\")."
    )
    @OptionGroup var options: CommonOptions
    @Argument(
        help:
            """
            The flow (default: the first replayable\
            \(ProductHelp.suffix(ProductHelp.flowNames(replayable: true)))).
            """,
        completion: .list(ProductHelp.flowNames(replayable: true)))
    var flow: String?

    func execute(_ runner: Runner) async throws { try await QuickCommand.replay(flow).execute(runner) }
}

struct Wait: ScriptableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait",
        abstract:
            """
            Let time pass and fire what is due (ONBOARDING_CLOCK=virtual moves a clock kept in the database).
            """
    )
    @OptionGroup var options: CommonOptions
    /// Read as text, so `wait -1` is a refused number and not an unknown option.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Seconds, such as 1.5.", valueName: "seconds"))
    var values: [String] = []

    func validate() throws { _ = try Self.seconds(values) }

    static func seconds(_ values: [String]) throws -> Double {
        guard values.count == 1, let seconds = Double(values[0]) else {
            throw ValidationError(
                values.isEmpty
                    ? "wait needs SECONDS, a number between 0 and one year (31536000)"
                    : """
                    SECONDS is one number between 0 and one year (31536000); got '\
                    \(values.joined(separator: " ").quotable)'
                    """
            )
        }
        guard seconds >= 0, seconds <= 86_400 * 365 else {
            throw ValidationError(
                "SECONDS must be between 0 and one year (31536000); got \(values[0].quotable)")
        }
        return seconds
    }

    func execute(_ runner: Runner) async throws {
        try await QuickCommand.wait(seconds: try Self.seconds(values)).execute(runner)
    }
}

struct Journal: ScriptableCommand {
    static let configuration = CommandConfiguration(
        commandName: "journal",
        abstract: "The user's journal rows: time, flow, step, event, outcome, and the analytics they sent.")
    @OptionGroup var options: CommonOptions

    func execute(_ runner: Runner) async throws { try await QuickCommand.journal.execute(runner) }
}

extension Runner {
    func journal() throws -> [JournalEntry] {
        try journalWithFacts(user: session.key.user)
    }

    /// `journal`: the user's rows, as text or one JSON array.
    func printJournal() throws {
        let rows = try journal()
        if json {
            let compiledFingerprints = self.compiledFingerprints
            let objects: [TourValue] = rows.map { row in
                [
                    "id": .int(Int(row.id)), "time": .double(row.time.timeIntervalSince1970),
                    "timeISO": .string(Render.iso(row.time.timeIntervalSince1970)),
                    "flow": row.flow.map(TourValue.string) ?? .null,
                    "step": row.step.map(TourValue.string) ?? .null,
                    "event": .string(row.event), "outcome": .string(row.outcome),
                    "effects": row.effects.tourValue, "facts": row.facts?.tourValue ?? .null,
                    "catalogVersion": .int(row.catalogVersion),
                    "catalogFingerprint": row.catalogFingerprint.map(TourValue.string) ?? .null,
                    // Rows before fingerprints (0.9) ran under the compiled catalog: nothing was published
                    // then.
                    "catalogSource": .string(
                        row.catalogFingerprint.map {
                            compiledFingerprints.contains($0) ? "compiled" : "published"
                        } ?? "compiled"),
                ]
            }
            Output.document(try TourValue.list(objects).jsonText())
            return
        }
        for row in rows {
            let place = [row.flow, row.step].compactMap { $0 }.joined(separator: "/")
            let analytics = row.effects.compactMap { effect -> String? in
                if case .analytics(let event) = effect { event.name } else { nil }
            }
            let sent = analytics.isEmpty ? "" : " [analytics: \(analytics.joined(separator: ", "))]"
            Output.line(
                """
                #\(row.id) \(Render.iso(row.time.timeIntervalSince1970)) \(place.isEmpty ? "-" : place) \
                \(row.event): \(row.outcome)\(sent)
                """
            )
        }
    }
}

struct Sync: ScriptableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Push the outbox to the account server and pull the account's records, now.",
        discussion: """
            Needs --server URL (or ONBOARDING_SERVER) and the account's token in ONBOARDING_TOKEN. \
            Every event is committed locally first and waits in the outbox until the server has it; \
            launch and the first event of every run pull first, and every event pushes when the server \
            answers. Exit status 4 when the server cannot be reached or refuses: nothing local is lost. \
            A row the server refuses for what it carries is set aside (status says how many and why) \
            and the rows after it go on; --retry-set-aside sends the set-aside rows again.
            """)
    @OptionGroup var options: CommonOptions
    @Flag(help: "Send the rows the server refused and set aside again (after the server was fixed).")
    var retrySetAside = false

    func execute(_ runner: Runner) async throws {
        if retrySetAside {
            try await runner.sync(retrySetAside: true)
        } else {
            try await QuickCommand.sync.execute(runner)
        }
    }
}
