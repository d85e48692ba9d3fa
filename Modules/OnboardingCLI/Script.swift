import ArgumentParser
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

struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Run a script of commands (without the app name), one per line, # for comments.",
        discussion:
            """
            Reads standard input when no FILE is given. Stops at the first refused line, \
            names its number and exits 1 
            """
                + """
                (a piped interactive session goes on and exits 1 at the end instead). With --json: \
                JSON Lines, one 
                """
                + "document per command, the refused line's as {\"error\": {...}}."
    )
    @OptionGroup var options: CommonOptions
    @Argument(help: "The script file.", completion: .file()) var file: String?
    @Flag(help: "Print each line before what it prints, as a transcript (with --json, as {\"line\": ...}).")
    var echo = false

    func run() async throws {
        try await Self.run(file: file, echo: echo, options: options.run)
    }

    /// What `play` does, whichever reader read its command line (``QuickParse`` reads it too).
    static func run(file: String?, echo: Bool, options: RunOptions) async throws {
        // A file is read whole; standard input line by line, so a pipe is played as it arrives.
        var lines: AnyIterator<String>
        if let file {
            guard let contents = FileManager.default.contents(atPath: file) else {
                throw CLIFailure.usage("cannot read the script '\(file.quotable)'")
            }
            var iterator = String(decoding: contents, as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: false).map(String.init).makeIterator()
            lines = AnyIterator { iterator.next() }
        } else {
            lines = AnyIterator { readLine() }
        }
        try await Runner.run(options) { runner in
            var number = 0
            // A line means the same each time: scripts repeat lines, and parsing one with the full
            // grammar is the costly part of a line in a debug build.
            var parsed: [String: ScriptLine] = [:]
            while let raw = lines.next() {
                number += 1
                if echo { Output.echo(raw, json: options.json) }
                do {
                    let line = try parsed[raw] ?? ScriptLine.parse(raw, session: runner.options)
                    if parsed.count < 1_000 { parsed[raw] = line }
                    switch line {
                    case .empty: continue
                    case .quit: return
                    case .help: try await SessionHelp.print(runner)
                    case .command(let command): try await command.execute(runner)
                    case .quick(let command, _): try await command.execute(runner)
                    }
                } catch let failure as CLIFailure where failure.code == CLIFailure.Code.database.rawValue {
                    throw failure
                } catch {
                    throw await runner.failure(for: error, scriptLine: raw).at(line: number)
                }
            }
        }
    }
}

/// One line of a script or of the interactive session.
enum ScriptLine {
    case empty
    case quit
    case help
    case command(any ScriptableCommand)
    /// A line `QuickParse` read, with the options it gave (a script's lines give none).
    case quick(QuickCommand, options: RunOptions)

    /// The commands a line may start with (``CommandList``); any other first word is an action.
    static var commandNames: Set<String> { CommandList.scriptableNames }

    /// Parses a line with the CLI's own grammar. A line that does not start with a command is an
    /// action: `next` means `do next`.
    ///
    /// The common options (`--user`, `--db`, `--json`, ...) belong to the command line that started
    /// the script or session; a line that gives them is refused, naming the ones it runs with,
    /// rather than running with options other than those the line shows.
    static func parse(_ line: String, session: RunOptions) throws -> ScriptLine {
        let parsed = try parse(line)
        let given: [String]
        switch parsed {
        case .quick(_, let options): given = options.given
        case .command(let command): given = command.options.run.given
        case .empty, .quit, .help: given = []
        }
        guard given.isEmpty else {
            let running = session.given.isEmpty ? "its defaults" : session.given.joined(separator: " ")
            throw CLIFailure.usage(
                """
                options go on the command line that starts the session, not on a line: \
                got \(given.joined(separator: " ")); 
                """
                    + """
                    this session runs with \(running). Write the line without them, \
                    or start another run with the options.
                    """
            )
        }
        return parsed
    }

    static func parse(_ line: String) throws -> ScriptLine {
        var words = try tokenize(line)
        guard let first = words.first else { return .empty }
        if first == "quit" || first == "exit" { return .quit }
        if first == "help" || first == "?" { return .help }
        if CommandList.standaloneNames.contains(first) {
            throw CLIFailure.usage(
                """
                \(first) cannot run inside a script or session (it runs only alone); lines start with: \
                \(commandNames.sorted().joined(separator: ", "))
                """
            )
        }
        if !commandNames.contains(first) { words.insert("do", at: 0) }
        if let quick = QuickParse.command(words) { return .quick(quick.command, options: quick.options) }
        let parsed = try RootCommand.parseAsRoot(words)
        guard let command = parsed as? any ScriptableCommand else {
            throw CLIFailure.usage(
                """
                '\(first.quotable)' is not a command here; commands: \
                \(commandNames.sorted().joined(separator: ", "))
                """
            )
        }
        return .command(command)
    }

    /// Splits on spaces, keeping quoted text together: `savePhase name="High school"`. As in a
    /// shell, a `#` that starts a word begins a comment to the end of the line; inside quotes or a
    /// word it is text (`savePhase name="Room #2"`).
    static func tokenize(_ text: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character?
        var inWord = false
        for character in text {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "#" && !inWord {
                break
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character.isWhitespace {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        if quote != nil { throw CLIFailure.usage("a quote is not closed") }
        if inWord { words.append(current) }
        return words
    }
}

extension Runner {
    /// The failure of a script line: a word that is no action but close to a command gets "did you
    /// mean" that command.
    func failure(for error: any Error, scriptLine: String) async -> CLIFailure {
        var failure = await failure(for: error)
        if failure.code == TourRefusal.Code.unknownAction.rawValue, failure.suggestion == nil,
            let first = (try? ScriptLine.tokenize(scriptLine))?.first,
            let command = NameSuggestion.nearest(
                to: first, in: ScriptLine.commandNames.sorted() + ["help", "quit"])
        {
            failure.suggestion = command
            failure.message += " (Did you mean the command '\(command)'?)"
        }
        return failure
    }
}

/// `help` (or `?`) in a session or script: the actions the card takes now, and the commands.
enum SessionHelp {
    /// The scriptable commands' lines from ``CommandList``, then the session's own words.
    static let commands: [(String, String)] =
        CommandList.entries.filter(\.isScriptable).compactMap {
            $0.sessionHelp.map { ($0.usage, $0.summary) }
        }
        + [("help, ?", "this list"), ("quit", "end the session")]

    static func print(_ runner: Runner) async throws {
        let snapshot = try await runner.session.snapshot()
        let actions = snapshot.card?.actions.map(\.name) ?? runner.product.catalog.freeActions.map(\.name)
        let hint = snapshot.card == nil ? try await runner.nextMoveHint() : nil
        if runner.json {
            struct Body: Encodable {
                struct Help: Encodable {
                    var actions: [String]
                    var commands: [String]
                    var hint: String?
                }
                var help: Help
            }
            Output.document(
                try Render.json(Body(help: .init(actions: actions, commands: commands.map(\.0), hint: hint))))
            return
        }
        Output.line(
            actions.isEmpty
                ? "Actions now: none.\(hint.map { " " + $0 } ?? "")"
                : "Actions now: \(actions.joined(separator: ", ")).")
        Output.line("Commands:")
        for (command, what) in commands {
            Output.line("  " + command.padded(to: 24) + what)
        }
    }
}

/// The session `APP` with no subcommand runs: the app launches, then each line is a command or action.
struct Interactive {
    let runner: Runner

    func run() async throws {
        let terminal = isatty(STDIN_FILENO) == 1
        let reader: LineReader? = terminal ? LineReader(prompt: "> ") : nil
        let welcome =
            """
            \(runner.cli.displayName) \(runner.product.catalog.flowNoun) · user \(runner.session.key.user) · 
            """
            + "database \(runner.displayPath) · type help or quit"
        // On a terminal the welcome is part of the conversation; a pipe keeps standard output for
        // the answers (JSON Lines under --json), so it goes to standard error there.
        if terminal && !runner.json { Output.line(welcome) } else { Output.error(welcome) }
        runner.inSession = true
        // Piped lines that start with `launch` launch the app themselves (with their own version):
        // the session does not launch it first as well.
        var first: String? = terminal ? nil : readLine()
        if !(first.map(Self.launches) ?? false) {
            try await runner.launch(version: nil)
            try await settle()
            try await runner.report(.card)
        }
        var number = 0
        var refused = 0
        defer { reader?.close() }
        session: while true {
            let next: String?
            if let pending = first {
                next = pending
                first = nil
            } else if let reader {
                next = reader.readLine()
            } else {
                next = readLine()
            }
            guard let line = next else { break }
            number += 1
            do {
                switch try ScriptLine.parse(line, session: runner.options) {
                case .empty: continue
                case .quit: break session
                case .help: try await SessionHelp.print(runner)
                case .command(let command):
                    try await command.execute(runner)
                    if try await settle() { try await runner.report(.card) }
                case .quick(let command, _):
                    try await command.execute(runner)
                    if try await settle() { try await runner.report(.card) }
                }
            } catch let failure as CLIFailure where failure.code == CLIFailure.Code.database.rawValue {
                throw failure
            } catch {
                refused += 1
                let failure = await runner.failure(for: error, scriptLine: line)
                Output.fail(terminal ? failure : failure.at(line: number), json: runner.json)
            }
        }
        try finish(refused: refused, of: number)
    }

    /// Whether a line is the `launch` command (with or without its options).
    static func launches(_ line: String) -> Bool {
        line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first == "launch"
    }

    /// A session whose input was not a terminal exits 1 when any line was refused, so a script can
    /// trust its exit status (each refusal was printed as it happened).
    private func finish(refused: Int, of lines: Int) throws {
        guard refused > 0, isatty(STDIN_FILENO) != 1 else { return }
        Output.error("\(runner.cli.executable): \(refused) of \(lines) lines refused")
        throw ExitCode(CLIFailure.refusedStatus)
    }

    /// Waits out a short timer when there is nothing to do meanwhile (a start delay, a closing
    /// finale), as a person watching the app would. Returns whether it waited.
    @discardableResult
    private func settle() async throws -> Bool {
        var waited = false
        for _ in 0..<8 {
            let snapshot = try await runner.session.snapshot()
            guard snapshot.card?.actions.isEmpty ?? true, let next = snapshot.nextTimerAt,
                case let seconds = max(0, next - snapshot.now), seconds <= 10
            else { break }
            if !runner.json { Output.line("  … \(Render.format(seconds)) s pass") }
            try await runner.wait(seconds)
            waited = true
        }
        return waited
    }
}

/// The `do --help` text: every action of every step, with its parameters, from the catalog itself.
enum ActionHelp {
    /// Lines are packed to this width and broken only between entries, so the parser's own
    /// wrapping (at 80 columns on a pipe) never cuts an entry in two.
    static let width = 76

    static func text(for cli: CLIProduct) -> String {
        let catalog = cli.catalog
        var lines = [
            "Actions of \(cli.displayName), step by step (back and skip where a step allows them):"
        ]
        for flow in catalog.flows {
            lines.append("\(flow.id):")
            for step in flow.steps {
                let actions =
                    step.actions.filter { !$0.isWayOut }.map { describe($0, fields: flow.fields) }
                    + step.passThrough
                    + step.actions.filter(\.isWayOut).map { describe($0, fields: flow.fields) }
                lines += pack("  \(step.id): ", actions.isEmpty ? ["(closes by itself)"] : actions)
            }
        }
        if !catalog.freeActions.isEmpty {
            lines += pack(
                "Outside \(catalog.flowNoun.withArticle): ",
                catalog.freeActions.map { describe($0, fields: catalog.freeFields) })
        }
        return lines.joined(separator: "\n")
    }

    /// `head` then the entries separated by "; ", a new line (indented) before an entry that would
    /// pass ``width``.
    static func pack(_ head: String, _ entries: [String]) -> [String] {
        var lines: [String] = []
        var line = head
        var empty = true
        for entry in entries {
            let piece = empty ? entry : "; " + entry
            if !empty, line.count + piece.count > width {
                lines.append(line + ";")
                line = "      " + entry
            } else {
                line += piece
            }
            empty = false
        }
        lines.append(line)
        return lines
    }

    static func describe(_ action: StepAction, fields: [FieldSpec]) -> String {
        let name =
            action.aliases.isEmpty
            ? action.name : "\(action.name) (or \(action.aliases.joined(separator: ", ")))"
        guard !action.fills.isEmpty else { return name }
        let parameters = action.fills.map { name -> String in
            let required = action.requiredParameters.contains(name)
            let kind = fields.first { $0.name == name }.map { shape(of: $0.kind) } ?? "TEXT"
            return required ? "\(name)=\(kind)" : "[\(name)=\(kind)]"
        }
        return "\(name) \(parameters.joined(separator: " "))"
    }

    private static func shape(of kind: FieldSpec.Kind) -> String {
        switch kind {
        case .text: "TEXT"
        case .secret: "SECRET"
        case .list: "A,B,..."
        case .choice(let options): options.joined(separator: "|")
        case .integer: "N"
        case .date: "YYYY-MM-DD"
        }
    }
}
