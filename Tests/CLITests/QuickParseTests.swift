import LockedInOnboarding
import Testing
import TourFixtures

@testable import OnboardingCLI

/// Command lines of the common grammar are read without the argument parser (`QuickParse`); every
/// line it reads must mean what the argument parser reads it as, and every line it declines goes to
/// the argument parser unchanged.
@Suite("Quick parse of option-only commands")
struct QuickParseTests {
    static let product = CLIProduct(LockedInOnboarding.registration)

    /// What a reading of a line comes to: the command with its values, and every common option's value.
    static func reading(_ command: QuickCommand, _ o: RunOptions) -> String {
        var values = "\(command)"
        if case .action(let name, let parameters) = command {
            values =
                "do \(name) "
                + parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        return "\(values) db=\(o.db ?? "nil") user=\(o.user) json=\(o.json) offline=\(o.offline) "
            + """
            server=\(o.server ?? "nil") permissions=\(o.permissions) answers=\(o.answers) \
            context=\(o.context)
            """
    }

    static func reading(quick: (command: QuickCommand, options: RunOptions)) -> String {
        reading(quick.command, quick.options)
    }

    /// The argument parser's reading, as the same values.
    static func reading(full parsed: Any) throws -> String? {
        if let play = parsed as? Play {
            return reading(.play(file: play.file, echo: play.echo), play.options.run)
        }
        guard let command = parsed as? any ScriptableCommand else { return nil }
        let values: QuickCommand
        switch command {
        case let launch as Launch: values = .launch(appVersion: launch.appVersion)
        case is Show: values = .show
        case is Status: values = .status
        case is Journal: values = .journal
        case is Sync: values = .sync
        case let action as Do: values = .action(action.action, parameters: try Do.parse(action.parameters))
        case let visit as Visit: values = .visit(visit.feature)
        case let signal as Signal: values = .signal(signal.name)
        case let reset as Reset: values = .reset(reset.flow)
        case let replay as Replay: values = .replay(replay.flow)
        case let wait as Wait: values = .wait(seconds: try Wait.seconds(wait.values))
        default: return nil
        }
        return reading(values, command.options.run)
    }

    static let taken: [[String]] = [
        ["status"], ["status", "--json"], ["show", "--user", "u1", "--db", "/tmp/x.sqlite"],
        ["status", "--json", "--db=/tmp/a b.sqlite", "--user=u_2.x"], ["journal", "--user", "ana", "--json"],
        ["sync", "--server", "http://127.0.0.1:9", "--offline"],
        [
            "status", "--permission", "screenTime=granted", "--permission", "health=denied", "--answer",
            "health=denied",
        ],
        ["show", "--json", "--offline", "--user", "u9"], ["status", "--db", ""],
        ["launch"], ["launch", "--app-version", "2.5"], ["launch", "--app-version=1.0.1", "--json"],
        ["do", "next"], ["do", "chooseApps", "apps=Instagram,TikTok", "--json"],
        ["do", "--user", "u1", "next"],
        ["do", "savePhase", "name=High school", "startYear=2004"], ["visit", "dashboard"],
        ["signal", "revealCompleted"],
        ["reset"], ["reset", "onboarding"], ["replay"], ["replay", "--json", "onboarding"], ["wait", "1.5"],
        ["wait", "0"], ["wait", "31536000", "--json"],
        ["play"], ["play", "--echo"], ["play", "--echo", "--json", "--user", "u1", "morning.play"],
        ["play", "s.play", "--db=/tmp/p.sqlite", "--offline"],
    ]

    static let declined: [[String]] = [
        [], ["status", "--help"], ["status", "-h"], ["status", "--jsn"], ["status", "--json", "--json"],
        ["status", "--user"], ["status", "--user", "--json"], ["status", "--user", "bad name!"],
        ["status", "--user", "a", "--user", "b"], ["status", "extra"], ["status", "--json=yes"],
        ["status", "--permission", "nonsense"], ["status", "--context", "volume=11"], ["--json", "status"],
        ["status", "--", "--json"], ["help", "status"], ["--version"], ["status", "--db", "-"],
        ["status", "--db="],
        ["show", "--context", "online=false"], ["launch", "--app-version", "two"],
        ["launch", "--app-version"],
        ["launch", "extra"], ["status", "--app-version", "2.0"], ["do"], ["do", "next", "oops"],
        ["do", "help"],
        ["do", "next", "=x"], ["wait"], ["wait", "-1"], ["wait", "1", "2"], ["wait", "soon"],
        ["wait", "inf"],
        ["visit"], ["visit", "a", "b"], ["signal"], ["reset", "a", "b"], ["replay", "a", "b"], ["explain"],
        ["report"], ["play", "a.play", "b.play"], ["play", "--echo=yes"], ["play", "--echo", "--echo"],
        ["play", "--app-version", "2.5"], ["play", "help"], ["status", "--echo"], ["do", "-x"],
        ["launch", "--app-version", "2.5", "--app-version", "2.6"],
    ]

    @Test(arguments: taken)
    func aLineItTakesMeansWhatTheArgumentParserReads(_ line: [String]) throws {
        try CLIEnvironment.$product.withValue(Self.product) {
            let quick = try #require(QuickParse.command(line), "\(line) should take the quick path")
            let full = try RootCommand.parseAsRoot(line)
            #expect(try Self.reading(full: full) != nil)
            #expect(try Self.reading(quick: quick) == Self.reading(full: full), "\(line)")
        }
    }

    @Test(arguments: declined)
    func aLineItDeclinesGoesToTheArgumentParser(_ line: [String]) {
        CLIEnvironment.$product.withValue(Self.product) {
            #expect(QuickParse.command(line) == nil, "\(line)")
        }
    }

    /// Random lines of the common options' words, for every product (their names differ: Finite
    /// asks for no permission, Carrier Wave and Growth declare `online`): wherever the quick path
    /// reads one, the argument parser reads the same. Seeded, so a failure repeats. 500 lines a
    /// product under `swift test` (each command drawn about 15 times, with up to six words from the
    /// list, beside the fixed lines above), 2,000 with `ONBOARDING_SOAK=full` (CI).
    static let randomLines = Soak.size(quick: 500, full: 2_000)

    @Test(arguments: registeredProducts.map(\.executable))
    func randomLinesAgree(_ executable: String) throws {
        let registration = try #require(registeredProducts.first { $0.executable == executable })
        let words = [
            "--json", "--offline", "--user", "u1", "--db", "/tmp/f.sqlite", "--user=x", "--server",
            "http://h:1",
            "--permission", "health=granted", "--answer", "screenTime=denied", "--context", "online=true",
            "-x", "=",
            "--db=", "status", "next", "apps=A,B", "1.5", "onboarding", "--app-version", "2.5", "k=", "-1",
            "help",
            "", "-", "--", "é", "name=Ünïcode 😀", "--permission=health=granted", "--server=http://h:2",
            "--app-version=2.6", "--echo", "script.play", "--answer=connection=denied",
            "--context=online=false", "--db=/tmp/g.sqlite",
            "--user=", "a=b=c", "dashboard", "revealCompleted", "walkthrough", "0", "--JSON",
        ]
        var generator = SplitMix64(seed: UInt64(executable.utf8.reduce(0) { $0 &* 31 &+ Int($1) }.magnitude))
        var quickCount = 0
        try CLIEnvironment.$product.withValue(CLIProduct(registration)) {
            // Every command (from the one list): the quick reader takes some lines of some of them.
            let commands = CommandList.names
            for _ in 0..<Self.randomLines {
                let command = commands.anyElement(using: &generator)
                let line =
                    [command]
                    + (0..<Int.random(in: 0...6, using: &generator)).map { _ in
                        words.anyElement(using: &generator)
                    }
                guard let quick = QuickParse.command(line) else { continue }
                quickCount += 1
                let full = try RootCommand.parseAsRoot(line)
                #expect(try Self.reading(quick: quick) == Self.reading(full: full), "\(executable) \(line)")
            }
        }
        #expect(quickCount > Self.randomLines * 3 / 40)
    }
}
