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

/// The session `APP` with no subcommand runs: the app launches, then each line is a command or action.
struct Interactive {
    let runner: Runner

    func run() async throws {
        let terminal = isatty(STDIN_FILENO) == 1
        let reader: LineReader? = terminal ? LineReader(prompt: "> ") : nil
        let welcome =
            """
            \(runner.cli.displayName) \(runner.product.catalog.flowNoun) · \
            user \(runner.session.key.user) · 
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
