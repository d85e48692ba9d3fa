import ArgumentParser
import Foundation
import LockedInOnboarding
import TestThreads
import Testing
import TourFixtures

@testable import OnboardingCLI

/// A command is declared once, in `CommandList`; these prove every entry (so a new one too) is
/// reachable from each path that reads commands: the command line, `help`, a line of a script or
/// session, the session's help, and the unknown-command suggestion.
@Suite("Commands declared in one place", .ownThread)
struct CommandListTests {
    static let product = CLIProduct(LockedInOnboarding.registration)

    /// (The root's subcommands are the list, so this holds by construction; it guards the
    /// derivation itself, and the names: each command names itself, once.)
    @Test func everyCommandIsASubcommandOfTheRoot() {
        CLIEnvironment.$product.withValue(Self.product) {
            #expect(CommandList.names.count == Set(CommandList.names).count, "a name is declared twice")
            let subcommands = Set(RootCommand.configuration.subcommands.map(ObjectIdentifier.init))
            for entry in CommandList.entries {
                #expect(!entry.name.isEmpty, "\(entry.command) names itself")
                #expect(
                    subcommands.contains(ObjectIdentifier(entry.command)), "\(entry.name) is a subcommand")
            }
        }
    }

    /// A command type written but left out of the list would be reachable from nowhere: every type
    /// in the CLI's sources that conforms to one of the parser's command protocols (in its
    /// declaration or an extension, wherever it stands in the list) is in the list, or is a
    /// subcommand of one that is.
    @Test func everyCommandWrittenIsInTheList() throws {
        let listed = Set(CommandList.entries.map { String(describing: $0.command) })
        let nested = CLIEnvironment.$product.withValue(Self.product) {
            Set(
                CommandList.entries.flatMap {
                    $0.command.configuration.subcommands.map { String(describing: $0) }
                })
        }
        let declaration = try Regex(
            #"""
            (?m)^\s*(?:public |internal |private |fileprivate )?(?:struct|extension|final \#
            class|class|enum) (\w+)\s*:([^{]*)\{
            """#
        )
        var written: [String] = []
        for file in LayeringTests.swiftFiles(under: "Modules/OnboardingCLI") {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for match in text.matches(of: declaration) {
                guard let name = match.output[1].substring, let conformances = match.output[2].substring
                else { continue }
                let protocols = conformances.split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespacesAndNewlines)
                }
                if protocols.contains(where: {
                    ["ScriptableCommand", "AsyncParsableCommand", "ParsableCommand"].contains($0)
                }) {
                    written.append(String(name))
                }
            }
        }
        #expect(written.count > 10, "\(written)")
        for name in written where name != "RootCommand" && !nested.contains(name) {
            #expect(listed.contains(name), "\(name) is a command but not in CommandList.entries")
        }
    }

    /// The grammar in Docs/CLI.md shows every command.
    @Test func theDocumentedGrammarNamesEveryCommand() throws {
        let readme = try String(contentsOfFile: GrammarTests.packageRoot + "/Docs/CLI.md", encoding: .utf8)
        let names = CLIEnvironment.$product.withValue(Self.product) { CommandList.names }
        for name in names {
            #expect(
                readme.contains("\nAPP \(name) ") || readme.contains("\nAPP \(name)\n"),
                "Docs/CLI.md's grammar shows APP \(name)")
        }
    }

    /// What a line starting with the command's name comes to: the command it reached, or the
    /// refusal of the parser, which names the command stack it reached (a missing argument).
    static func reached(_ line: String) -> String {
        do {
            switch try ScriptLine.parse(line) {
            case .quick(let command, _): return command.name
            case .command(let command): return type(of: command).configuration.commandName ?? "?"
            case .empty, .quit, .help: return "-"
            }
        } catch {
            return "\(error)"
        }
    }

    @Test func aScriptableCommandStartsALineAndTheOthersAreRefusedThere() throws {
        try CLIEnvironment.$product.withValue(Self.product) {
            for entry in CommandList.entries {
                #expect(
                    entry.isScriptable == (entry.sessionHelp != nil),
                    "\(entry.name): session help iff scriptable")
                if entry.isScriptable {
                    #expect(ScriptLine.commandNames.contains(entry.name))
                    // The line reaches the command itself, not an action of that name (`do NAME`).
                    let reached = Self.reached(entry.name)
                    #expect(
                        reached == entry.name
                            || reached.contains(
                                """
                                commandStack: \
                                [OnboardingCLI.RootCommand, \(String(reflecting: entry.command))]
                                """
                            ),
                        "\(entry.name): \(reached)")
                    let usage = try #require(entry.sessionHelp).usage
                    #expect(
                        SessionHelp.commands.contains { $0.0 == usage },
                        "\(entry.name) is in the session's help")
                } else {
                    #expect(!ScriptLine.commandNames.contains(entry.name))
                    // (The tests' own `CLIFailure` hides the module's; the refusal's text is in its
                    // description.)
                    let error = #expect(throws: (any Error).self) { try ScriptLine.parse(entry.name) }
                    let text = error.map { String(describing: $0) } ?? ""
                    #expect(text.contains("\(entry.name) cannot run inside a script"), "\(text)")
                }
            }
        }
    }

    /// Real processes: every command answers `--help` with its own usage.
    @Test func everyCommandHasItsOwnHelp() throws {
        let cli = try CLI("lockedin")
        let names = CLIEnvironment.$product.withValue(Self.product) { CommandList.names }
        for name in names {
            let result = try cli.run(name, "--help")
            #expect(result.status == 0, "\(name) --help: \(result.stderr)")
            #expect(
                result.stdout.contains("USAGE: lockedin \(name)"), "\(name): \(result.stdout.prefix(200))")
        }
    }

    /// Real processes: a near miss of any command's name is answered with that name, and the list
    /// of commands names every one.
    @Test func aMisspelledCommandSuggestsTheOneMeant() throws {
        let cli = try CLI("lockedin")
        // (A command's configuration may read the product, as it does in the executable.)
        let names = CLIEnvironment.$product.withValue(Self.product) { CommandList.names }
        for name in names {
            let typo = name + "x"
            let result = try cli.run(typo)
            #expect(result.status == 2, "\(typo)")
            #expect(result.stderr.contains("Did you mean '\(name)'?"), "\(typo): \(result.stderr)")
            for other in names {
                #expect(result.stderr.contains(other), "\(typo): the list names \(other)")
            }
        }
    }
}
