import Foundation
import TestThreads
import Testing
import TourFixtures

@Suite("One CLI grammar, run as real processes", .ownThread)
struct GrammarTests {
    /// Every registered product (every folder under Apps/).
    static let products = registeredProducts.map(\.executable)

    @Test(arguments: products)
    func versionIsTheSharedModulesVersionFromTheChangelog(product: String) throws {
        let cli = try CLI(product)
        let result = try cli.run("--version")
        #expect(result.status == 0)
        let changelog = try String(contentsOfFile: Self.packageRoot + "/CHANGELOG.md", encoding: .utf8)
        let newest = try #require(changelog.split(separator: "\n").first { $0.hasPrefix("## ") })
        let version = newest.dropFirst(3).split(separator: " ").first.map(String.init)
        #expect(result.stdout == "\(product) \(version ?? "?")\n")
    }

    /// Under `--json` every answer is one JSON document, help and the version too, wherever
    /// `--json` stands; after `--` it is an argument, not the option.
    @Test(arguments: products)
    func helpAndVersionUnderJSONAreDocuments(product: String) throws {
        let cli = try CLI(product)
        for arguments in [["--json", "--version"], ["--version", "--json"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 0)
            let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let version = document?["version"] as? [String: Any]
            #expect(version?["executable"] as? String == product, "\(result.stdout)")
            #expect(
                version?["version"] as? String
                    == (try cli.run("--version")).stdout.split(separator: " ").last.map {
                        String($0.dropLast())
                    })
        }
        for arguments in [
            ["--json", "--help"], ["status", "--help", "--json"], ["help", "do", "--json"],
            ["catalog", "--json", "--help"],
        ] {
            let result = try cli.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let text = (document?["help"] as? [String: Any])?["text"] as? String
            #expect(text?.contains("USAGE") == true, "\(arguments): \(result.stdout)")
        }
    }

    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    @Test func lockedInStatusAfterAFullOnboardingShowsTheStartingBank() throws {
        let cli = try CLI("lockedin")
        for command in [
            ["launch"], ["do", "next"], ["do", "chooseApps", "apps=Instagram,TikTok,YouTube,Reddit"],
            ["do", "next"],
            ["do", "next"], ["do", "grantScreenTime"], ["do", "grantHealth"], ["do", "next"],
            ["do", "letsGo"],
        ] {
            let result = try cli.run(command)
            #expect(result.status == 0, "lockedin \(command.joined(separator: " ")): \(result.stderr)")
        }
        let status = try cli.json("status")
        #expect(status.state["startingBankMinutes"] as? Int == 60)
        #expect(status.flow("onboarding")?["status"] as? String == "completed")
        #expect(status["card"] is NSNull)
    }

    @Test func theJSONObjectHasTheAgreedShape() throws {
        let cli = try CLI("growth")
        try cli.run("do", "completeOnboarding")
        let shown = try cli.json("visit", "dashboard")
        #expect(shown["app"] as? String == "growth")
        #expect(shown["user"] as? String == "default")
        let flow = try #require(shown.flow("app_tour"))
        #expect(flow["status"] as? String == "active")
        #expect(flow["step"] as? String == "dashboard")
        #expect(flow["stepIndex"] as? Int == 1)
        #expect(flow["stepCount"] as? Int == 5)
        #expect(flow["canSkip"] as? Bool == true)
        #expect(flow["canGoBack"] as? Bool == false)
        #expect(flow["actions"] as? [String] == ["next", "skip"])
        let card = try #require(shown.card)
        #expect(card["flow"] as? String == "app_tour")
        #expect(card["step"] as? String == "dashboard")
        #expect(card["title"] as? String == "Your Dashboard")
        #expect(card["body"] is String)
        #expect(card["hint"] is NSNull)
        #expect(card["actions"] as? [String] == ["next", "skip"])
        #expect(shown.state["onboardingComplete"] as? Bool == true)
        for command in ["launch", "show", "status"] {
            #expect(try cli.json(command)["flows"] is [[String: Any]], "\(command) --json")
        }
    }

    @Test func aRefusedActionPrintsOneLineExitsNonZeroAndChangesNothing() throws {
        let cli = try CLI("lockedin")
        try cli.run("launch")
        try cli.run("do", "next")
        let before = cli.databaseBytes()
        let result = try cli.run("do", "next")
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr
                == """
                lockedin: refused 'next' (onboarding step appSelection): Select at least one app to \
                continue. Allowed now: chooseApps, back.\n
                """
        )
        #expect(cli.databaseBytes() == before)
        let unknown = try cli.run("do", "fly")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("unknown action"))
        #expect(cli.databaseBytes() == before)
    }

    @Test func badInputIsRefusedWithWhatIsAllowed() throws {
        let cli = try CLI("finite")
        let user = try cli.run("status", "--user", "no spaces")
        #expect(user.status != 0)
        #expect(user.stderr.contains("--user must be 1 to 64 letters"))
        let parameter = try cli.run("do", "next", "oops")
        #expect(parameter.status != 0)
        #expect(parameter.stderr.contains("parameters are written KEY=VALUE"))
        let version = try cli.run("launch", "--app-version", "two")
        #expect(version.status != 0)
        #expect(version.stderr.contains("must be a dotted version number such as 2.5"))
        let permission = try CLI("lockedin").run("status", "--permission", "screenTime=maybe")
        #expect(permission.status != 0)
        #expect(permission.stderr.contains("notDetermined, granted, denied, restricted"))
        // Names are the product's own: Finite asks for no permission, LockedIn for two.
        let none = try cli.run("status", "--permission", "screenTime=granted")
        #expect(none.status != 0 && none.stderr.contains("Finite asks for no permissions"))
        let unknown = try CLI("lockedin").run("launch", "--answer", "camera=denied")
        #expect(unknown.status != 0 && unknown.stderr.contains("NAME is one of screenTime, health"))
        #expect(!FileManager.default.fileExists(atPath: cli.database))
    }

    @Test func syncIsACommandOnTheCommandLineAndInSessions() throws {
        let cli = try CLI("growth")
        // A malformed sync line is a usage error about sync, not "unknown command 'sync'".
        let missing = try cli.run("sync", "--server")
        #expect(missing.status == 2)
        #expect(!missing.stderr.contains("unknown command"), "\(missing.stderr)")
        #expect(missing.stderr.contains("--server"), "\(missing.stderr)")
        // Without a server, sync says what it needs, on the command line and as a session line
        // (where it used to be read as an action named sync).
        let alone = try cli.run("sync")
        #expect(alone.status == 2 && alone.stderr.contains("sync needs an account server"), "\(alone.stderr)")
        let session = try cli.run(stdin: "sync\n")
        #expect(session.status != 0)
        #expect(session.stderr.contains("sync needs an account server"), "\(session.stderr)")
        #expect(!session.stderr.contains("unknown action"), "\(session.stderr)")
    }

    @Test func doHelpListsEveryActionsParameters() throws {
        let cli = try CLI("finite")
        let help = try cli.run("do", "--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("savePhase name=TEXT [startYear=N]"))
        #expect(help.stdout.contains("longPressWeek week=N"))
        #expect(help.stdout.contains("Outside a walkthrough: setBirthDate date=YYYY-MM-DD"))
    }

    @Test func theVirtualClockHoldsAcrossInvocations() throws {
        let cli = try CLI("moodtracker")
        try cli.run("launch")
        #expect(try cli.json("show")["card"] is NSNull)
        try cli.run("wait", "0.3")
        #expect(try cli.json("show")["card"] is NSNull)
        let shown = try cli.json("wait", "0.2")
        #expect(shown.card?["step"] as? String == "swipeToSelect")
    }

    @Test func theWallClockReallyWaits() throws {
        let cli = try CLI("moodtracker", clock: "wall")
        try cli.run("launch")
        let started = Date()
        let shown = try cli.json("wait", "0.6")
        #expect(Date().timeIntervalSince(started) >= 0.6)
        #expect(shown.card?["step"] as? String == "swipeToSelect")
    }

    @Test func theDefaultDatabaseIsAPerProductFileInTheXDGDataDirectory() throws {
        var cli = try CLI("finite")
        cli.environment["ONBOARDING_DB"] = nil
        cli.environment["XDG_DATA_HOME"] = cli.folder.appendingPathComponent("xdg").path
        try cli.run("launch")
        #expect(
            FileManager.default.fileExists(
                atPath: cli.folder.appendingPathComponent("xdg/onboarding/finite.sqlite").path))
        // Reading a database that does not exist yet creates nothing; the first write does.
        let elsewhere = cli.folder.appendingPathComponent("elsewhere.sqlite").path
        let other = try cli.run("status", "--db", elsewhere)
        #expect(other.status == 0)
        #expect(!FileManager.default.fileExists(atPath: elsewhere))
        #expect(try cli.run("launch", "--db", elsewhere).status == 0)
        #expect(FileManager.default.fileExists(atPath: elsewhere))
    }

    @Test func aDatabaseFromANewerSchemaIsRefusedAndLeftUnchanged() throws {
        let cli = try CLI("lockedin")
        try cli.run("launch")
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [
            cli.database,
            "PRAGMA wal_checkpoint(TRUNCATE); INSERT INTO grdb_migrations VALUES ('v99-future');",
        ]
        try ChildProcess.spawning { try sqlite.run() }
        sqlite.waitUntilExit()
        let before = FileManager.default.contents(atPath: cli.database)
        let result = try cli.run("status")
        #expect(result.status == 3)
        #expect(result.stderr.contains("was written by a newer version"))
        #expect(result.stderr.contains("v99-future"))
        #expect(FileManager.default.contents(atPath: cli.database) == before)
    }
}
