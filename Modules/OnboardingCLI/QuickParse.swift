/// A command that takes only the common options, run straight from a line `QuickParse` read.
enum OptionsOnlyCommand: String, CaseIterable {
    case show, status, journal, sync

    /// What the argument parser's command of the same name does (`Show`, `Status`, `Journal`, `Sync`).
    func execute(_ runner: Runner) async throws {
        switch self {
        case .show: try await runner.report(.card)
        case .status: try await runner.report(.status)
        case .journal: try runner.printJournal()
        case .sync: try await runner.sync()
        }
    }
}

/// The start-up path of the commonest one-shot commands, without the argument parser.
///
/// The argument parser builds every command's definition by reflection (`Mirror`, dynamic casts)
/// before it reads a word, and even its property wrappers instantiate generic types at run time;
/// in a process that runs one command and exits, that was the largest part of its start-up
/// (Docs/Performance.md, the cold start). A line that names a command taking only the common
/// options, each spelled plainly (`--user u1`, `--user=u1`, `--json`), is read here into the same
/// values (``RunOptions``). Anything else (help, an unknown or repeated option, a value that looks
/// like an option, a value the options' own validation refuses) returns nil, and the argument
/// parser reads the line as before, so every message and every refusal stays its own.
/// `QuickParseTests` checks that both readings agree.
enum QuickParse {
    static func command(_ arguments: [String]) -> (command: OptionsOnlyCommand, options: RunOptions)? {
        guard let name = arguments.first, let command = OptionsOnlyCommand(rawValue: name),
            let options = options(Array(arguments.dropFirst()))
        else { return nil }
        guard (try? options.validate()) != nil else { return nil }
        return (command, options)
    }

    /// The common options of `words`, or nil when the argument parser should read them.
    static func options(_ words: [String]) -> RunOptions? {
        var db: String?
        var user: String?
        var server: String?
        var json = false
        var offline = false
        var permissions: [String] = []
        var answers: [String] = []
        var context: [String] = []
        var index = 0
        while index < words.count {
            let word = words[index]
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
                guard inline == nil, !(name == "json" ? json : offline) else { return nil }
                if name == "json" { json = true } else { offline = true }
            case "db", "user", "server":
                guard let given = value() else { return nil }
                switch name {
                case "db": guard db == nil else { return nil }; db = given
                case "user": guard user == nil else { return nil }; user = given
                default: guard server == nil else { return nil }; server = given
                }
            case "permission", "answer", "context":
                guard let given = value() else { return nil }
                switch name {
                case "permission": permissions.append(given)
                case "answer": answers.append(given)
                default: context.append(given)
                }
            default:
                return nil
            }
            index += 1
        }
        return RunOptions(
            db: db, user: user ?? "default", json: json, permissions: permissions, answers: answers, offline: offline,
            server: server, context: context)
    }
}
