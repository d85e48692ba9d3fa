import Foundation
import TestThreads
import Testing
import TourFixtures

@Suite("play and the interactive session", .ownThread)
struct ScriptTests {
    @Test func playRunsAScriptWithCommentsFromAFile() throws {
        let cli = try CLI("finite")
        let script = cli.folder.appendingPathComponent("walkthrough.txt")
        try """
        # Finite's walkthrough, start to finish
        do setBirthDate date=1990-05-01
        launch
        wait 1.5
        next                      # tap anywhere
        do tapCurrentWeek
        swipeToChapters
        next
        savePhase name="High school" startYear=2004
        longPressWeek week=100
        saveMark note='a good week'
        wait 2.5
        status
        """.write(to: script, atomically: true, encoding: .utf8)
        let result = try cli.run("play", script.path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("walkthrough  completed"))
        #expect(result.stdout.contains("phases: name=High school, startYear=2004"))
        #expect(result.stdout.contains("markedWeeks: note=a good week, week=100"))
    }

    /// `#` starts a comment only where a word starts, as in a shell: a quoted value or a word may
    /// hold one (`savePhase name="Room #2"` saves "Room #2", not "Room ").
    @Test func aHashInsideAQuotedValueOrAWordIsText() throws {
        let cli = try CLI("finite")
        let script = """
            do setBirthDate date=1990-05-01
            launch
            wait 1.5
            next # tap anywhere
            do tapCurrentWeek
            swipeToChapters
            next
            savePhase name="Room #2 # not a comment" startYear=2004 # a comment
            longPressWeek week=100
            saveMark note=week#100
            """
        let result = try cli.run("play", stdin: script + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        let state = try cli.json("status").state
        #expect(
            (state["phases"] as? [[String: Any]])?.first?["name"] as? String == "Room #2 # not a comment",
            "\(state)")
        #expect(
            (state["markedWeeks"] as? [[String: Any]])?.first?["note"] as? String == "week#100", "\(state)")
    }

    /// The common options belong to the command line that starts a script or session. A line that
    /// gives its own (`status --user other`) is refused, naming what the session runs with, instead
    /// of running with options other than those the line shows.
    @Test func optionsOnALineAreRefusedNamingTheSessionsOwn() throws {
        let cli = try CLI("lockedin")
        for line in [
            "status --user other", "next --json", "show --db /tmp/elsewhere.sqlite", "reset --offline",
            "explain --user=x",
        ] {
            let played = try cli.run(["play", "--user", "u1"], stdin: "launch\n\(line)\n")
            #expect(played.status == 1, "\(line)")
            #expect(
                played.stderr.contains("line 2: options go on the command line that starts the session"),
                "\(line): \(played.stderr)")
            #expect(played.stderr.contains("this session runs with --user u1"), "\(played.stderr)")
            let session = try cli.run(["--user", "u1"], stdin: "\(line)\nstatus\n")
            #expect(session.status == 1)
            #expect(session.stderr.contains("options go on the command line"), "\(line): \(session.stderr)")
        }
        // No other user was touched, and a line's own options (launch --app-version) still work.
        #expect(try cli.run("journal", "--user", "other", "--json").stdout == "[]\n")
        #expect(try cli.run("journal", "--user", "x", "--json").stdout == "[]\n")
        #expect(try cli.run(["play", "--user", "u1"], stdin: "launch --app-version 1.0\n").status == 0)
    }

    @Test func playStopsAtTheFirstRefusedLineAndNamesIt() throws {
        let cli = try CLI("lockedin")
        let result = try cli.run("play", stdin: "launch\n\n# choose apps first\nnext\nnext\nnext\n")
        #expect(result.status == 1)
        #expect(
            result.stderr.split(separator: "\n").filter { !$0.contains("created the database") }
                == [
                    """
                    lockedin: line 5: refused 'next' (onboarding step appSelection): Select at least one \
                    app to continue. Allowed now: chooseApps, back.
                    """
                ])
        #expect(try cli.json("show").card?["step"] as? String == "appSelection")
        let bad = try cli.run("play", stdin: "show\nwait soon\n")
        #expect(bad.status == 1)
        #expect(bad.stderr.hasPrefix("lockedin: line 2: "))
    }

    @Test func playWithJSONPrintsOneObjectPerCommand() throws {
        let cli = try CLI("moodtracker")
        let result = try cli.run("play", "--json", stdin: "launch\nwait 0.5\nswipeUp\n")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        let last = try #require(try JSONSerialization.jsonObject(with: Data(lines[2].utf8)) as? [String: Any])
        #expect((last.state["moodEntries"] as? [[String: Any]])?.first?["mood"] as? String == "mid")
    }

    @Test func withNoSubcommandItRunsTheOnboardingReadingOneCommandPerLine() throws {
        let cli = try CLI("moodtracker")
        let result = try cli.run([], stdin: "next\nfly\nnext\nGet\nnext\n")
        // It goes on past a refused line, and its exit status says one was refused.
        #expect(result.status == 1)
        #expect(result.stderr.contains("2 of 5 lines refused"))
        #expect(result.stdout.contains("Swipe to Select"))
        #expect(result.stdout.contains("You're All Set!"))
        #expect(result.stderr.contains("refused 'fly'"))
        #expect(try cli.json("status").flow("tutorial")?["status"] as? String == "completed")
    }

    @Test func replayFromAccountLeavesTheStoredRecordUnchanged() throws {
        let cli = try CLI("moodtracker")
        try cli.run("play", stdin: "launch\nwait 0.5\nnext\nnext\nnext\n")
        let before = try cli.json("status")
        let replay = try cli.json("replay")
        #expect(replay.card?["step"] as? String == "swipeToSelect")
        #expect(replay.card?["isReplay"] as? Bool == true)
        try cli.run("play", stdin: "next\nskip\n")
        let after = try cli.json("status")
        #expect(NSDictionary(dictionary: after.state) == NSDictionary(dictionary: before.state))
        #expect(after.flow("tutorial")?["status"] as? String == "completed")
        let journal = try cli.run("journal")
        #expect(journal.stdout.contains("tutorial_replayed"))
        #expect(journal.stdout.contains("tutorial_completed"))
        #expect(journal.stdout.contains("tutorial_started"))
    }

    @Test func aPasswordNeverReachesOutputDatabaseOrJournal() throws {
        let cli = try CLI("carrierwave")
        let password = "pw-\(UUID().uuidString)"
        let result = try cli.run(
            "play", stdin: "launch\nnext\nnext\nconnect username=W1AW password=\(password)\nstatus\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("qrz: W1AW") || result.stdout.contains("qrz=W1AW"))
        let journal = try cli.run("journal", "--json")
        let everything = result.stdout + result.stderr + journal.stdout
        #expect(!everything.contains(password))
        // The file and its WAL byte by byte, and every row the journal table holds.
        #expect(cli.databaseBytes().range(of: Data(password.utf8)) == nil)
        #expect(!(try CLI.sqlite(cli.database, ".dump")).contains(password))
        let offline = try cli.run(
            ["do", "connect", "username=W1AW", "password=-", "--offline"], stdin: password + "\n")
        #expect(!(offline.stdout + offline.stderr).contains(password))
    }

    /// A secret typed on the command line is refused (it would stay in the shell's history and the
    /// process list), with one message saying how to give it, and nothing is written; `NAME=-`
    /// reads it from standard input, by either reader of the command line (`--json` takes the
    /// argument parser's), and the connection goes through.
    @Test func aSecretOnTheCommandLineIsRefusedAndReadFromStandardInputInstead() throws {
        let cli = try CLI("carrierwave")
        try cli.run("play", stdin: "launch\nnext\nnext\n")
        let before = try cli.run("journal", "--json").stdout
        let password = "pw-\(UUID().uuidString)"
        for extra in [[], ["--json"]] {
            let typed = try cli.run(["do", "connect", "username=W1AW", "password=\(password)"] + extra)
            #expect(typed.status == 2, "\(typed.stdout)\(typed.stderr)")
            #expect(
                (typed.stderr + typed.stdout).contains("password is a secret"),
                "\(typed.stderr)\(typed.stdout)")
            #expect(
                (typed.stderr + typed.stdout).contains(
                    "Set ONBOARDING_SECRET_PASSWORD (or ONBOARDING_SECRET_PASSWORD_FILE"))
            #expect(!(typed.stdout + typed.stderr).contains(password))
            let empty = try cli.run(["do", "connect", "username=W1AW", "password=-"] + extra, stdin: "")
            #expect(empty.status == 2, "\(empty.stderr)")
        }
        #expect(try cli.run("journal", "--json").stdout == before, "a refused secret changed the journal")
        let piped = try cli.run(["do", "connect", "username=W1AW", "password=-"], stdin: password + "\n")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(
            piped.stdout.contains("Connected to") || piped.stdout.contains("moreServices")
                || piped.stdout.contains("More Services"), "\(piped.stdout)")
        #expect(!(piped.stdout + piped.stderr).contains(password))
        #expect(cli.databaseBytes().range(of: Data(password.utf8)) == nil)
    }

    /// The secret from the environment, for an action that takes it and does not name it: the
    /// variable itself, or a file it names (its first line); a file that cannot be read is refused.
    @Test func aSecretComesFromTheEnvironmentOrAFile() throws {
        let file = Scratch.folder.appendingPathComponent("qrz-\(UUID().uuidString)")
        let password = "pw-\(UUID().uuidString)"
        try Data((password + "\r\nignored\n").utf8).write(to: file)
        for (variable, value) in [
            ("ONBOARDING_SECRET_PASSWORD", password), ("ONBOARDING_SECRET_PASSWORD_FILE", file.path),
        ] {
            var cli = try CLI("carrierwave")
            try cli.run("play", stdin: "launch\nnext\nnext\n")
            cli.environment[variable] = value
            let connected = try cli.run("do", "connect", "username=W1AW")
            #expect(connected.status == 0, "\(variable): \(connected.stderr)")
            #expect(
                try cli.json("status").state["accounts"] as? [String: String] == ["qrz": "W1AW"],
                "\(variable)")
            #expect(!(connected.stdout + connected.stderr).contains(password))
            #expect(cli.databaseBytes().range(of: Data(password.utf8)) == nil)
        }
        var missing = try CLI("carrierwave")
        try missing.run("play", stdin: "launch\nnext\nnext\n")
        missing.environment["ONBOARDING_SECRET_PASSWORD_FILE"] = "/nonexistent/qrz"
        let refused = try missing.run("do", "connect", "username=W1AW")
        #expect(refused.status == 2 && refused.stderr.contains("cannot be read"), "\(refused.stderr)")
        #expect(try missing.json("status").state["accounts"] == nil)
    }

    @Test func carrierWaveShowAppTourResetsAndPresentsTheIntro() throws {
        let cli = try CLI("carrierwave")
        try cli.run("play", stdin: "launch\nskip\n")
        let replay = try cli.json("replay")
        #expect(replay.card?["flow"] as? String == "intro")
        #expect(replay.card?["step"] as? String == "welcome")
    }
}

@Suite("Crashes and concurrent processes", .ownThread)
struct ReliabilityTests {
    /// A long script of accepted commands for LockedIn, looping through the onboarding.
    static let loop = (0..<400).map { _ in
        "launch\nnext\nchooseApps apps=A,B\nnext\nback\nnext\nselectDifficulty difficulty=hard\n"
    }
    .joined()

    /// Killed at observed points (after the k-th line's output was read, so k lines committed and
    /// the next one is running): the file is intact and its state is exactly its journal's.
    @Test(arguments: [1, 7, 25, 60])
    func aKilledProcessLeavesTheLastCommittedState(afterLine line: Int) throws {
        let cli = try CLI("lockedin")
        let running = try EchoingProcess(cli, arguments: [], script: Self.loop)
        try #require(running.waitForEcho(line + 1), "the process ended before line \(line + 1)")
        running.kill()
        #expect(
            running.process.terminationReason == .uncaughtSignal, "exit \(running.process.terminationStatus)")
        // The file opens, passes SQLite's integrity check, and every flow state is what the
        // journal's committed events imply: no half-written event.
        let check = try CLI.sqlite(cli.database, "PRAGMA integrity_check;")
        #expect(check == "ok\n")
        let verified = try cli.run("status", "--json")
        #expect(verified.status == 0, "\(verified.stderr)")
        let rebuilt = try JournalCheck.rebuildMatchesStoredState(database: cli.database)
        #expect(rebuilt.matches, "after a kill on line \(line + 1): \(rebuilt.detail)")
        // Lines 1...line committed (each accepted line journals one row or more), the next maybe.
        #expect(rebuilt.rows >= line)
    }

    /// Two processes each send 1,000 events to one file at the same time. Each event reads the
    /// product's virtual clock and writes it back one second later: a lost update would leave the
    /// clock short of 2,000 seconds.
    @Test func twoProcessesSendingAThousandEventsEachLoseNothing() throws {
        let cli = try CLI("moodtracker")
        let scripts = ["wait 1", "wait 1.0"].map { String(repeating: "\($0)\n", count: 1_000) }
        let processes = scripts.map { _ in cli.process(["play", "--user", "shared"]) }
        let (inputs, errors) = try Self.start(processes)
        for (input, script) in zip(inputs, scripts) {
            input.fileHandleForWriting.send(script)
            try? input.fileHandleForWriting.close()
        }
        let messages = errors.map {
            String(decoding: $0.fileHandleForReading.readUntilEnd(), as: UTF8.self)
        }
        for process in processes { process.waitUntilExit() }
        #expect(processes.map(\.terminationStatus) == [0, 0], "\(messages)")
        // Nothing but the one note of the process that created the file.
        let lines = messages.flatMap { $0.split(separator: "\n") }
        #expect(
            lines.count <= 1 && lines.allSatisfy { $0.contains("created the database at") }, "\(messages)")
        #expect(
            try CLI.sqlite(cli.database, "SELECT event, count(*) FROM journal GROUP BY event;")
                == "clockAdvanced|2000\n")
        let status = try cli.json("status", "--user", "shared")
        #expect((status["now"] as? NSNumber)?.doubleValue == 1_767_605_600)
    }

    @Test func twoProductsWritingOneFileBothSucceed() throws {
        let first = try CLI("lockedin")
        var second = try CLI("finite")
        second.environment["ONBOARDING_DB"] = first.database
        let script = String(repeating: "status\nlaunch\n", count: 60)
        let processes = [first.process(["play"]), second.process(["play"])]
        let (inputs, errors) = try Self.start(processes)
        for input in inputs {
            input.fileHandleForWriting.send(script)
            try? input.fileHandleForWriting.close()
        }
        let messages = errors.map {
            String(decoding: $0.fileHandleForReading.readUntilEnd(), as: UTF8.self)
        }
        for process in processes { process.waitUntilExit() }
        #expect(processes.map(\.terminationStatus) == [0, 0], "\(messages)")
        #expect(
            try CLI.sqlite(first.database, "SELECT app, count(*) FROM journal GROUP BY app ORDER BY app;")
                == "finite|120\nlockedin|60\n")
    }
}

extension ReliabilityTests {
    /// Starts `processes` with a pipe each for their input and errors, and their output dropped.
    static func start(_ processes: [Process]) throws -> (inputs: [Pipe], errors: [Pipe]) {
        var inputs: [Pipe] = []
        var errors: [Pipe] = []
        for process in processes {
            try ChildProcess.spawning {
                let (input, error) = (Pipe(), Pipe())
                inputs.append(input)
                errors.append(error)
                process.standardInput = input
                process.standardOutput = FileHandle.nullDevice
                process.standardError = error
                try process.run()
            }
        }
        return (inputs, errors)
    }

    /// Where the three start-up races lived: setting WAL, checking and running migrations.
    @Test func severalProcessesCreatingOneNewFileAllSucceed() throws {
        for _ in 0..<3 {
            let first = try CLI("moodtracker")
            let processes = (0..<4).map { _ in first.process(["launch"]) }
            let errors = try ChildProcess.spawning {
                let errors = processes.map { _ in Pipe() }
                for (process, error) in zip(processes, errors) {
                    process.standardOutput = FileHandle.nullDevice
                    process.standardError = error
                    try process.run()
                }
                return errors
            }
            let messages = errors.map {
                String(decoding: $0.fileHandleForReading.readUntilEnd(), as: UTF8.self)
            }
            for process in processes { process.waitUntilExit() }
            #expect(processes.map(\.terminationStatus) == [0, 0, 0, 0], "\(messages)")
            #expect(try CLI.sqlite(first.database, "SELECT count(*) FROM journal;") == "4\n")
        }
    }
}

extension CLI {
    /// Runs the sqlite3 shell on a database and returns what it printed.
    static func sqlite(_ database: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [database, sql]
        let output = try ChildProcess.spawning {
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            return output
        }
        let data = output.fileHandleForReading.readUntilEnd()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

@Suite("The documented sample sessions", .ownThread)
struct SampleSessionTests {
    /// Every registered product, a new one included, has a sample session that plays through.
    @Test(arguments: InsightTests.products)
    func everyProductHasASampleSessionThatPlays(_ product: (String, String)) throws {
        let path = GrammarTests.packageRoot + "/Apps/\(product.1)/sample-session.txt"
        guard FileManager.default.fileExists(atPath: path) else {
            Issue.record(
                "\(product.0) has no Apps/\(product.1)/sample-session.txt (scripts/new-product writes one)")
            return
        }
        let result = try CLI(product.0).run("play", path)
        #expect(
            result.status == 0, "\(product.0) play Apps/\(product.1)/sample-session.txt: \(result.stderr)")
    }

    @Test(arguments: [
        ("Finite", "finite", "walkthrough  completed"), ("LockedIn", "lockedin", "startingBankMinutes: 60"),
        ("CarrierWave", "carrierwave", "challenges        completed"),
        ("Growth", "growth", "app_tour  completed"),
        ("MoodTracker", "moodtracker", "tutorial_replayed"),
    ])
    func eachProductsSampleSessionPlaysToTheEnd(folder: String, executable: String, ending: String) throws {
        let cli = try CLI(executable)
        let result = try cli.run("play", GrammarTests.packageRoot + "/Apps/\(folder)/sample-session.txt")
        #expect(result.status == 0, "\(executable): \(result.stderr)")
        #expect(result.stdout.contains(ending), "\(executable) sample session did not end with '\(ending)'")
    }
}
