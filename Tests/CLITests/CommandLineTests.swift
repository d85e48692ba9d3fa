import Foundation
import TestThreads
import Testing
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

/// The command line as product teams live in it, through the built executables: outcomes a
/// script can trust, what to do next, help in the session, one JSON contract, a visible database,
/// and help and completions that speak for each product.
@Suite("The command line", .ownThread)
struct CommandLineTests {
    /// Every registered product (every folder under Apps/).
    static let products = registeredProducts.map(\.executable)
    /// The codes Docs/CLI.md documents for `{"error": {"code": ...}}`.
    static let documentedCodes: Set<String> = [
        "not_allowed_now", "unknown_action", "nothing_showing", "invalid_parameter", "unknown_feature",
        "unknown_signal", "unknown_flow", "not_replayable", "invalid_version", "not_waiting", "usage",
        "database",
        "interrupted",
    ]

    // MARK: - Outcomes and what to do next

    @Test func aPipedSessionExitsNonZeroWhenAnyLineWasRefusedAndGoesOn() throws {
        let cli = try CLI("growth")
        let refused = try cli.run([], stdin: "completeOnboarding\nnxt\nvisit dashboard\nstatus\n")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("line 2: refused 'nxt'"), "\(refused.stderr)")
        #expect(refused.stderr.contains("1 of 4 lines refused"))
        // It went on after the refusal: the visit started the tour.
        #expect(refused.stdout.contains("app_tour  active  step dashboard"), "\(refused.stdout)")
        let clean = try cli.run([], stdin: "next\nstatus\n")
        #expect(clean.status == 0, "\(clean.stderr)")
        // `play` stops at the first refused line.
        let played = try cli.run(["play"], stdin: "fly\nstatus\n")
        #expect(played.status == 1)
        #expect(!played.stdout.contains("app_tour"))
    }

    /// A piped session whose first line is `launch` launches the app once, with that line's
    /// version; any other first line finds the app launched by the session itself, once.
    @Test func aPipedSessionThatStartsWithLaunchLaunchesOnce() throws {
        func launches(_ cli: CLI) throws -> [String] {
            try CLI.sqlite(
                cli.database, "SELECT event_json FROM journal WHERE event = 'appLaunched' ORDER BY id;"
            )
            .split(separator: "\n").map(String.init)
        }
        let finite = try CLI("finite")
        let started = try finite.run([], stdin: "launch\nnext\n")
        #expect(started.status == 0, "\(started.stderr)")
        let finiteLaunches = try launches(finite)
        #expect(finiteLaunches.count == 1, "\(finiteLaunches)")
        #expect(started.stdout.components(separatedBy: "Step 1 of 6 ──").count == 2, "\(started.stdout)")
        let plain = try CLI("finite")
        #expect(try plain.run([], stdin: "next\n").status == 0)
        #expect(try launches(plain).count == 1)
        // The first line's own version is the only launch: an upgrade to 2.5 shows its prompt.
        let carrierWave = try CLI("carrierwave")
        #expect(try carrierWave.run([], stdin: "launch --app-version 2.0\nstatus\n").status == 0)
        let rows = try launches(carrierWave)
        #expect(rows.count == 1 && rows[0].contains("2.0"), "\(rows)")
    }

    /// In a session, a `wait` that changed nothing says so instead of printing the same card again;
    /// `show` still prints it, and a one-shot `wait` prints the card as always.
    @Test func aWaitThatChangesNothingInASessionSaysSo() throws {
        let finite = try CLI("finite")
        let session = try finite.run([], stdin: "wait 2\nshow\n")
        #expect(session.status == 0, "\(session.stderr)")
        #expect(session.stdout.contains("nothing new: the card above is still showing"), "\(session.stdout)")
        #expect(session.stdout.components(separatedBy: "Step 1 of 6 ──").count == 3, "\(session.stdout)")
        let oneShot = try finite.run("wait", "2")
        #expect(
            oneShot.stdout.contains("Step 1 of 6 ──") && !oneShot.stdout.contains("nothing new"),
            "\(oneShot.stdout)")
    }

    @Test func nothingShowingNamesWhatMovesThingsOn() throws {
        let finite = try CLI("finite")
        let fresh = try finite.run("do", "next")
        #expect(fresh.status == 1)
        #expect(fresh.stderr.contains("no walkthrough is showing"), "\(fresh.stderr)")
        #expect(fresh.stderr.contains("`launch`"), "\(fresh.stderr)")
        #expect(try finite.run("show").stdout.contains("No walkthrough is showing. Next: `launch`"))

        let growth = try CLI("growth")
        try growth.run("launch")
        try growth.run("do", "completeOnboarding")
        let shown = try growth.run("show")
        #expect(shown.stdout.contains("`visit dashboard` starts the tour"), "\(shown.stdout)")
        let refused = try growth.run("do", "next", "--json")
        let error = try Self.error(refused)
        #expect(error["code"] as? String == "nothing_showing")
        #expect((error["hint"] as? String)?.contains("`visit dashboard`") == true)

        // Every tour finished: the hint says how to see it again.
        // A start delay: the wait that shows it.
        let mood = try CLI("moodtracker")
        try mood.run("launch")
        #expect(try mood.run("show").stdout.contains("Next: `wait 0.5` shows the tutorial."))
        try mood.run(["play"], stdin: "wait 0.5\nnext\nnext\nnext\n")
        let finished = try mood.run("show").stdout
        #expect(
            finished.contains("Every tutorial is finished; `replay` shows the tutorial again."), "\(finished)"
        )
    }

    @Test func nearMissesGetDidYouMeanAndUnknownActionsAreCalledSo() throws {
        let cli = try CLI("lockedin")
        try cli.run("launch")
        try cli.run("do", "next")
        let previous = try cli.run("do", "previous", "--json")
        #expect(try Self.error(previous)["suggestion"] as? String == "back")
        #expect(previous.stderr.contains("Did you mean 'back'?"))
        let misspelt = try cli.run("do", "nxet", "--json")
        let error = try Self.error(misspelt)
        #expect(error["code"] as? String == "unknown_action")
        #expect(error["suggestion"] as? String == "next")
        #expect(misspelt.stderr.contains("unknown action"))
        #expect(!misspelt.stderr.contains("does not accept"))
        // A real action of another step is not "unknown": it is not allowed now.
        let elsewhere = try cli.run("do", "letsGo", "--json")
        #expect(try Self.error(elsewhere)["code"] as? String == "not_allowed_now")
        #expect(elsewhere.stderr.contains("this step does not accept 'letsGo'"))

        let growth = try CLI("growth")
        #expect(try growth.run("visit", "dashbord").stderr.contains("Did you mean 'dashboard'?"))
        #expect(try growth.run("reset", "app_tuor").stderr.contains("Did you mean 'app_tour'?"))
        #expect(try growth.run("explain", "app_tuor").stderr.contains("Did you mean 'app_tour'?"))
        #expect(try growth.run("stauts").stderr.contains("Did you mean 'status'?"))
        // Growth's button says Previous: the same action as back.
        try growth.run("do", "completeOnboarding")
        try growth.run("visit", "dashboard")
        try growth.run("do", "next")
        #expect(try growth.run("do", "previous").status == 0)
    }

    @Test(arguments: products)
    func refusalsOfVisitSignalAndReplayListWhatThoseAccept(_ product: String) throws {
        let cli = try CLI(product)
        try cli.run("launch")
        for (command, label) in [("visit", "Features"), ("signal", "Signals")] {
            let result = try cli.run(command, "nowhere", "--json")
            #expect(result.status == 1)
            let error = try Self.error(result)
            let message = error["message"] as? String ?? ""
            #expect(!message.contains("Allowed now"), "\(product) \(command): \(message)")
            #expect(!message.contains(": ."), "\(product) \(command): \(message)")
            let allowed = error["allowed"] as? [String] ?? []
            #expect(
                allowed.isEmpty
                    ? message.contains(" has no ") || message.contains(" reports no ")
                    : message.contains(label),
                "\(product) \(command): \(message)")
        }
        let replay = try cli.run("replay", "nothing", "--json")
        let message = try Self.error(replay)["message"] as? String ?? ""
        #expect(!message.contains("Allowed now"), "\(product): \(message)")
        #expect(!message.contains(": ."), "\(product): \(message)")
    }

    @Test func theSessionUnderstandsHelpAndWelcomesByProductUserAndDatabase() throws {
        let cli = try CLI("moodtracker")
        let result = try cli.run(["--user", "ana"], stdin: "help\n?\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.components(separatedBy: "Actions now:").count == 3, "\(result.stdout)")
        #expect(result.stdout.contains("Commands:"))
        #expect(result.stdout.contains("wait SECONDS"))
        let welcome = result.stderr.split(separator: "\n").filter { $0.contains("type help or quit") }
        #expect(welcome.count == 1)
        #expect(welcome.first?.contains("Mood Tracker") == true)
        #expect(welcome.first?.contains("user ana") == true)
        #expect(welcome.first?.contains(cli.database) == true)
    }

    @Test func theSessionEditsLinesAndKeepsHistoryOnATerminal() throws {
        let cli = try CLI("lockedin")
        let terminal = try TerminalSession(cli, arguments: [])
        #expect(terminal.waitFor("type help or quit"))
        #expect(terminal.waitFor("> "))
        // "ext", Home, "n", Enter: the line is "next".
        var mark = terminal.output.count
        terminal.type("ext\u{01}n\r")
        #expect(terminal.waitFor("SELECT YOUR POISON", after: mark), "\(terminal.output)")
        // "nxx", Backspace twice, "ext": "next"... refused at this step, which proves the edit.
        mark = terminal.output.count
        terminal.type("bacx\u{7F}k\r")
        #expect(terminal.waitFor("Earn your screen time", after: mark), "\(terminal.output)")
        // ↑ ↑ recalls "next" (the line before "back"): the onboarding moves on again.
        mark = terminal.output.count
        terminal.type("\u{1B}[A\u{1B}[A\r")
        #expect(terminal.waitFor("SELECT YOUR POISON", after: mark), "\(terminal.output)")
        terminal.type("quit\r")
        #expect(terminal.exitStatus() == 0)
        let journal = try cli.run("journal", "--json")
        let events =
            (try JSONSerialization.jsonObject(with: Data(journal.stdout.utf8)) as? [[String: Any]] ?? [])
            .compactMap { $0["event"] as? String }
        #expect(events.filter { $0.hasPrefix("next") }.count == 2, "\(events)")
        #expect(events.filter { $0.hasPrefix("back") }.count == 1, "\(events)")
    }

    // MARK: - One machine-readable contract

    @Test(arguments: products)
    func everyCommandUnderJSONWritesExactlyOneDocument(_ product: String) throws {
        let cli = try CLI(product)
        let commands: [[String]] = [
            ["launch"], ["show"], ["do", "next"], ["do", "fly"], ["do"], ["visit", "x"], ["signal", "x"],
            ["status"], ["journal"], ["report"], ["explain"], ["explain", "x"], ["graph"],
            ["graph", "--format", "x"],
            ["wait", "1"], ["wait", "-1"], ["wait"], ["replay", "x"], ["reset", "x"], ["--bogus"],
            ["status", "--user", ""], ["status", "--permission", "x=y"], ["launch", "--app-version", "x"],
            ["reset"],
        ]
        for command in commands {
            let result = try cli.run(command + ["--json"])
            let trimmed = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!trimmed.contains("\n"), "\(product) \(command): more than one line: \(result.stdout)")
            let document = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8))
            #expect(document != nil, "\(product) \(command): not JSON: \(result.stdout) \(result.stderr)")
            if result.status == 0 {
                #expect((document as? [String: Any])?["error"] == nil)
            } else {
                let error = (document as? [String: Any])?["error"] as? [String: Any]
                let code = error?["code"] as? String ?? ""
                #expect(Self.documentedCodes.contains(code), "\(product) \(command): code \(code)")
                #expect((error?["message"] as? String)?.isEmpty == false)
                #expect(error?["allowed"] is [String])
                #expect(error?["exitCode"] as? Int == Int(result.status))
                #expect([1, 2].contains(result.status), "\(product) \(command): exit \(result.status)")
            }
        }
    }

    @Test func playAndSessionsWriteJSONLines() throws {
        let cli = try CLI("finite")
        let played = try cli.run(["play", "--json"], stdin: "launch\nwait 2\nstatus\nfly\n")
        #expect(played.status == 1)
        let lines = played.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        for line in lines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "\(line)")
        }
        let last = try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as? [String: Any]
        #expect((last?["error"] as? [String: Any])?["line"] as? Int == 4)
        let session = try cli.run(["--json"], stdin: "fly\nhelp\n")
        for line in session.stdout.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "\(line)")
        }
        #expect(try cli.run(["play", "--help"]).stdout.contains("JSON Lines"))
    }

    @Test func graphUnderJSONWritesEachDiagramAsAString() throws {
        let cli = try CLI("carrierwave")
        let graph = try cli.json("graph", "--format", "dot")
        let flows = graph["flows"] as? [[String: Any]] ?? []
        #expect(flows.count > 3)
        for flow in flows {
            #expect((flow["diagram"] as? String)?.hasPrefix("digraph") == true)
            #expect(flow["flow"] is String)
        }
    }

    @Test func effectsUnderJSONAreObjectsShapedAsInTheJournal() throws {
        let cli = try CLI("lockedin")
        let launched = try cli.json("launch")
        let effects = launched["effects"] as? [[String: Any]] ?? []
        #expect(!effects.isEmpty)
        #expect(effects.allSatisfy { $0["type"] is String })
        let journal = try JSONSerialization.jsonObject(
            with: Data(try cli.run("journal", "--json").stdout.utf8))
        let stored = ((journal as? [[String: Any]])?.first?["effects"] as? [[String: Any]]) ?? []
        #expect(
            Set(stored.compactMap { $0["type"] as? String }).isSubset(
                of: Set(effects.compactMap { $0["type"] as? String })))
    }

    @Test func timesReadAsISO8601() throws {
        let cli = try CLI("finite")
        try cli.run("launch")
        try cli.run("do", "skip")
        let iso = #"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"#
        for command in [["journal"], ["explain"], ["status"]] {
            let text = try cli.run(command).stdout
            #expect(text.range(of: iso, options: .regularExpression) != nil, "\(command): \(text)")
            #expect(!text.contains(" t="), "\(command): \(text)")
        }
        let status = try cli.json("status")
        #expect(status["now"] is Double)
        #expect((status["nowISO"] as? String)?.range(of: iso, options: .regularExpression) != nil)
        let journal = try JSONSerialization.jsonObject(
            with: Data(try cli.run("journal", "--json").stdout.utf8))
        #expect(
            ((journal as? [[String: Any]])?.first?["timeISO"] as? String)?.hasPrefix("2026-01-05T09:00")
                == true)
    }

    @Test func parserErrorsAreOneLineWithTheUsageExitStatus() throws {
        let cli = try CLI("growth")
        for arguments in [
            ["--bogus"], ["do"], ["wait", "-1"], ["wait", "soon"], ["status", "--user"],
            ["graph", "--format"],
        ] {
            let result = try cli.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.status)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("USAGE"), "\(arguments)")
            #expect(result.stdout.isEmpty)
        }
        #expect(try cli.run("wait", "-1").stderr.contains("between 0 and one year"))
        #expect(try cli.run("do", "--help").stdout.contains("USAGE"))
    }

    // MARK: - The database is visible

    @Test func statusNamesTheFileAndCreatingOneSaysWhere() throws {
        let cli = try CLI("moodtracker")
        let first = try cli.run("launch")
        #expect(
            first.stderr.split(separator: "\n").filter {
                $0.contains("created the database at \(cli.database)")
            }.count == 1)
        #expect(!(try cli.run("launch").stderr.contains("created")))
        #expect(try cli.run("status").stdout.contains("database: \(cli.database)"))
        #expect(try cli.json("status")["database"] as? String == cli.database)
    }

    @Test func theDefaultDatabaseNeverLandsSomewhereSurprising() throws {
        var cli = try CLI("lockedin")
        cli.environment["ONBOARDING_DB"] = nil
        let home = cli.folder.appendingPathComponent("home").path
        cli.environment["HOME"] = home
        // A relative XDG_DATA_HOME is ignored, as the XDG spec says.
        cli.environment["XDG_DATA_HOME"] = "relative/data"
        let launched = try cli.run("launch")
        #expect(launched.status == 0, "\(launched.stderr)")
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/onboarding/lockedin.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: "relative/data"))
        // No HOME and no absolute XDG_DATA_HOME: refused, nothing written anywhere.
        cli.environment["HOME"] = nil
        let homeless = try cli.run("launch")
        #expect(homeless.status == 2)
        #expect(homeless.stderr.contains("HOME is not set"), "\(homeless.stderr)")
        let temp = NSTemporaryDirectory()
        for place in [
            "/.local/share/onboarding/lockedin.sqlite", "/onboarding/lockedin.sqlite", "/lockedin.sqlite",
        ] {
            #expect(!FileManager.default.fileExists(atPath: temp + place), "\(temp + place)")
        }
        // --db '' and --db FOLDER.
        cli.environment["HOME"] = home
        let empty = try cli.run("status", "--db", "")
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("--db is empty"))
        let folder = try cli.run("status", "--db", cli.folder.path)
        #expect(folder.status == 3)
        #expect(folder.stderr.contains("it is a folder"))
        #expect(!folder.stderr.contains("disk I/O"))
    }

    @Test func anUnknownClockIsRefused() throws {
        var cli = try CLI("finite")
        cli.environment["ONBOARDING_CLOCK"] = "virtaul"
        let result = try cli.run("launch")
        #expect(result.status == 2)
        #expect(result.stderr.contains("ONBOARDING_CLOCK is wall or virtual"))
        #expect(!FileManager.default.fileExists(atPath: cli.database))
    }

    @Test func aLongWaitOnTheRealClockCountsDownOnATerminalAndStopsOnCtrlC() throws {
        let cli = try CLI("lockedin", clock: "wall")
        try cli.run("launch")
        let rows = try cli.run("journal", "--json").stdout
        let terminal = try TerminalSession(cli, arguments: ["wait", "60"])
        #expect(terminal.waitFor("waiting"), "\(terminal.output)")
        #expect(terminal.waitFor("Ctrl-C stops"))
        terminal.process.interrupt()
        #expect(terminal.exitStatus(timeout: 10) == 130)
        #expect(terminal.waitFor("interrupted"))
        #expect(try cli.run("journal", "--json").stdout == rows, "the interrupted wait wrote nothing")
        // On a pipe: no countdown.
        let piped = try cli.run("wait", "0.2")
        #expect(piped.status == 0)
        #expect(!piped.stdout.contains("waiting"))
    }

    // MARK: - Helpers

    static func error(_ result: CLI.Result) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try #require(object?["error"] as? [String: Any], "no error document: \(result.stdout)")
    }
}
