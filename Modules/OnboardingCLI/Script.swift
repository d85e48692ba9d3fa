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
