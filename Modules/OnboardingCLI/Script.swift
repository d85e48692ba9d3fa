import ArgumentParser
import Foundation
import TourRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a script of commands (without the app name), one per line, # for comments.",
        discussion:
            "Reads standard input when no FILE is given. Stops at the first refused line and names its number."
    )
    @OptionGroup var options: CommonOptions
    @Argument(help: "The script file.") var file: String?
    @Flag(help: "Print each line before what it prints, as a transcript (with --json, as {\"line\": ...}).")
    var echo = false

    func run() async throws {
        // A file is read whole; standard input line by line, so a pipe is played as it arrives.
        var lines: AnyIterator<String>
        if let file {
            guard let contents = FileManager.default.contents(atPath: file) else {
                throw ValidationError("cannot read the script '\(file.quotable)'")
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
                    let line = try parsed[raw] ?? ScriptLine.parse(raw)
                    if parsed.count < 1_000 { parsed[raw] = line }
                    switch line {
                    case .empty: continue
                    case .quit: return
                    case .command(let command): try await command.execute(runner)
                    }
                } catch let refusal as TourRefusal {
                    throw CLIError.script(line: number, message: refusal.description)
                } catch let error as CLIError {
                    throw error
                } catch {
                    throw CLIError.script(line: number, message: ScriptLine.message(for: error))
                }
            }
        }
    }
}

/// One line of a script or of the interactive session.
enum ScriptLine {
    case empty
    case quit
    case command(any ScriptableCommand)

    static let commandNames: Set<String> = [
        "launch", "show", "do", "visit", "signal", "status", "reset", "replay", "wait", "journal", "report",
        "explain",
    ]

    /// Parses a line with the CLI's own grammar. A line that does not start with a command is an
    /// action: `next` means `do next`.
    static func parse(_ line: String) throws -> ScriptLine {
        let code =
            line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
            ?? ""
        var words = try tokenize(code)
        guard let first = words.first else { return .empty }
        if first == "quit" || first == "exit" { return .quit }
        if first == "play" { throw ValidationError("play cannot run inside a script") }
        if !commandNames.contains(first) { words.insert("do", at: 0) }
        let parsed = try RootCommand.parseAsRoot(words)
        guard let command = parsed as? any ScriptableCommand else {
            throw ValidationError(
                "'\(first.quotable)' is not a command here; commands: \(commandNames.sorted().joined(separator: ", "))"
            )
        }
        return .command(command)
    }

    static func message(for error: any Error) -> String {
        RootCommand.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
    }

    /// Splits on spaces, keeping quoted text together: `savePhase name="High school"`.
    static func tokenize(_ text: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character?
        var inWord = false
        for character in text {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
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
        if quote != nil { throw ValidationError("a quote is not closed") }
        if inWord { words.append(current) }
        return words
    }
}

/// The session `APP` with no subcommand runs: the app launches, then each line is a command or action.
struct Interactive {
    let runner: Runner

    func run() async throws {
        let terminal = isatty(STDIN_FILENO) == 1
        try await runner.launch(version: nil)
        try await settle()
        try await runner.report(.card)
        while true {
            if terminal {
                Output.write("> ")
            }
            guard let line = readLine() else { break }
            do {
                switch try ScriptLine.parse(line) {
                case .empty: continue
                case .quit: return
                case .command(let command):
                    try await command.execute(runner)
                    if try await settle() { try await runner.report(.card) }
                }
            } catch let refusal as TourRefusal {
                Output.error("\(runner.cli.executable): \(refusal)")
            } catch let error as CLIError {
                throw error
            } catch {
                Output.error("\(runner.cli.executable): \(ScriptLine.message(for: error))")
            }
        }
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
            Output.line("  … \(Render.format(seconds)) s pass")
            try await runner.wait(seconds)
            waited = true
        }
        return waited
    }
}

/// The `do --help` text: every action of every step, with its parameters, from the catalog itself.
enum ActionHelp {
    static func text(for cli: CLIProduct) -> String {
        let product = cli.make(RunEnvironment(databasePath: ":memory:", offline: false, user: "default"))
        var lines = [
            "Actions of \(cli.displayName), by flow and step (back and skip where the step allows them):"
        ]
        for flow in product.catalog.flows {
            lines.append("\(flow.id):")
            for step in flow.steps {
                let actions =
                    step.actions.filter { !$0.isWayOut }.map { describe($0, fields: flow.fields) }
                    + step.passThrough + step.actions.filter(\.isWayOut).map { describe($0, fields: flow.fields) }
                lines.append(
                    "  \(step.id): \(actions.isEmpty ? "(closes by itself)" : actions.joined(separator: "; "))"
                )
            }
        }
        if !product.catalog.freeActions.isEmpty {
            lines.append(
                "Outside a tour: "
                    + product.catalog.freeActions.map {
                        describe($0, fields: product.catalog.freeFields)
                    }.joined(separator: "; "))
        }
        return lines.joined(separator: "\n")
    }

    private static func describe(_ action: StepAction, fields: [FieldSpec]) -> String {
        guard !action.fills.isEmpty else { return action.name }
        let parameters = action.fills.map { name -> String in
            let required = action.requiredParameters.contains(name)
            let kind = fields.first { $0.name == name }.map { shape(of: $0.kind) } ?? "TEXT"
            return required ? "\(name)=\(kind)" : "[\(name)=\(kind)]"
        }
        return "\(action.name) \(parameters.joined(separator: " "))"
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
