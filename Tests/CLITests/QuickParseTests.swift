import LockedInOnboarding
import Testing

@testable import OnboardingCLI

/// The one-shot commands that take only the common options are read without the argument parser
/// (`QuickParse`); every line it reads must mean what the argument parser reads it as, and every
/// line it declines goes to the argument parser unchanged.
@Suite("Quick parse of option-only commands")
struct QuickParseTests {
    static let product = CLIProduct(LockedInOnboarding.registration)

    /// What a reading of a line comes to: the command and every common option's value.
    static func reading(_ name: String, _ o: RunOptions) -> String {
        "\(name) db=\(o.db ?? "nil") user=\(o.user) json=\(o.json) offline=\(o.offline) "
            + "server=\(o.server ?? "nil") permissions=\(o.permissions) answers=\(o.answers) context=\(o.context)"
    }

    static func reading(quick: (command: OptionsOnlyCommand, options: RunOptions)) -> String {
        reading(quick.command.rawValue, quick.options)
    }

    /// The argument parser's reading, when it is one of the option-only commands.
    static func reading(full command: Any) -> String? {
        guard let command = command as? any ScriptableCommand,
            let name = type(of: command).configuration.commandName,
            OptionsOnlyCommand(rawValue: name) != nil
        else { return nil }
        return reading(name, command.options.run)
    }

    static let taken: [[String]] = [
        ["status"], ["status", "--json"], ["show", "--user", "u1", "--db", "/tmp/x.sqlite"],
        ["status", "--json", "--db=/tmp/a b.sqlite", "--user=u_2.x"], ["journal", "--user", "ana", "--json"],
        ["sync", "--server", "http://127.0.0.1:9", "--offline"],
        ["status", "--permission", "screenTime=granted", "--permission", "health=denied", "--answer", "health=denied"],
        ["show", "--json", "--offline", "--user", "u9"], ["status", "--db", ""],
    ]

    static let declined: [[String]] = [
        [], ["status", "--help"], ["status", "-h"], ["status", "--jsn"], ["status", "--json", "--json"],
        ["status", "--user"], ["status", "--user", "--json"], ["status", "--user", "bad name!"],
        ["status", "--user", "a", "--user", "b"], ["status", "extra"], ["status", "--json=yes"],
        ["status", "--permission", "nonsense"], ["status", "--context", "volume=11"], ["do", "next"],
        ["launch"], ["--json", "status"], ["status", "--", "--json"], ["help", "status"], ["--version"],
        ["status", "--db", "-"], ["status", "--db="], ["show", "--context", "online=false"],
    ]

    @Test(arguments: taken)
    func aLineItTakesMeansWhatTheArgumentParserReads(_ line: [String]) throws {
        try CLIEnvironment.$product.withValue(Self.product) {
            let quick = try #require(QuickParse.command(line), "\(line) should take the quick path")
            let full = try RootCommand.parseAsRoot(line)
            #expect(Self.reading(full: full) != nil)
            #expect(Self.reading(quick: quick) == Self.reading(full: full), "\(line)")
        }
    }

    @Test(arguments: declined)
    func aLineItDeclinesGoesToTheArgumentParser(_ line: [String]) {
        CLIEnvironment.$product.withValue(Self.product) {
            #expect(QuickParse.command(line) == nil, "\(line)")
        }
    }

    /// Random lines of the common options' words: wherever the quick path reads one, the argument
    /// parser reads the same.
    @Test func randomLinesAgree() throws {
        let words = [
            "--json", "--offline", "--user", "u1", "--db", "/tmp/f.sqlite", "--user=x", "--server", "http://h:1",
            "--permission", "health=granted", "--answer", "screenTime=denied", "--context", "online=true", "-x", "=",
            "--db=", "status",
        ]
        var generator = SystemRandomNumberGenerator()
        var quickCount = 0
        try CLIEnvironment.$product.withValue(Self.product) {
            for _ in 0..<500 {
                let command = ["status", "show", "journal", "sync"].randomElement(using: &generator)!
                let line = [command] + (0..<Int.random(in: 0...6, using: &generator)).map { _ in
                    words.randomElement(using: &generator)!
                }
                guard let quick = QuickParse.command(line) else { continue }
                quickCount += 1
                let full = try RootCommand.parseAsRoot(line)
                #expect(Self.reading(quick: quick) == Self.reading(full: full), "\(line)")
            }
        }
        #expect(quickCount > 30)
    }
}
