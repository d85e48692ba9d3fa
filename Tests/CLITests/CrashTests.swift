import Foundation
import LockedInOnboarding
import Persistence
import Testing
import TourRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// SIGKILL at random moments while LockedIn's CLI runs onboardings for many users on one file.
///
/// `CRASH_KILLS` sets the number of kills (default 200, each CI run); `scripts/crash-test.sh` runs
/// a bigger count. After every kill: SQLite's integrity check passes; every flow's stored state is
/// what the journal rebuilds; each user's domain state (the starting bank) is exactly what the
/// journal's committed side effects make it, so a completion that committed granted the bank once
/// and one that did not left no trace; and the next command succeeds.
@Suite("SIGKILL at random moments")
struct CrashTests {
    static let kills = Int(ProcessInfo.processInfo.environment["CRASH_KILLS"] ?? "") ?? 200

    /// One user's loop: a debug reset, then the whole onboarding to LET'S GO, many times over.
    static let loop = String(
        repeating:
            "reset\nlaunch\nnext\nchooseApps apps=Instagram,TikTok\nnext\nselectDifficulty difficulty=hard\n"
            + "next\ngrantScreenTime\ngrantHealth\nnext\nletsGo\n",
        count: 40)

    @Test func everyKillLeavesTheLastCommittedStateAndSideEffectsExactlyOnce() async throws {
        var cli = try CLI("lockedin")
        var totals = (rows: 0, completions: 0)
        var generator = SystemRandomNumberGenerator()
        var survived = 0
        var inconsistencies: [String] = []
        for kill in 0..<Self.kills {
            // A new file every 50 kills: each check rebuilds the whole journal, which grows with the file.
            if kill > 0 && kill % 50 == 0 {
                totals = try Self.add(totals, cli)
                cli = try CLI("lockedin")
            }
            let user = "user\(kill % 12)"
            let process = cli.process(["play", "--user", user])
            let input = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            input.fileHandleForWriting.write(Data(Self.loop.utf8))
            // Anywhere from before the file is opened to deep into the script.
            let delay = UInt64.random(in: 0...250_000_000, using: &generator)
            try await Task.sleep(nanoseconds: delay)
            Glibc.kill(process.processIdentifier, SIGKILL)
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            guard FileManager.default.fileExists(atPath: cli.database) else { continue }
            let problems = try Self.check(cli)
            inconsistencies += problems.map {
                "after kill \(kill + 1) (\(delay / 1_000_000) ms, \(user)): \($0)"
            }
            if problems.isEmpty { survived += 1 }
            if inconsistencies.count > 5 { break }
        }
        totals = try Self.add(totals, cli)
        print(
            "crash test: \(survived) of \(Self.kills) kills checked and survived, \(inconsistencies.count) inconsistencies; "
                + "journals \(totals.rows) rows, \(totals.completions) completions (each granted the bank once)"
        )
        for problem in inconsistencies { Issue.record("\(problem)") }
        #expect(survived >= Self.kills * 9 / 10, "most kills should find a database to check")
    }

    static func add(_ totals: (rows: Int, completions: Int), _ cli: CLI) throws -> (
        rows: Int, completions: Int
    ) {
        guard FileManager.default.fileExists(atPath: cli.database) else { return totals }
        let figures = try CLI.sqlite(
            cli.database, "SELECT count(*), sum(outcome LIKE '%onboarding completed%') FROM journal;"
        ).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").map { Int($0) ?? 0 }
        return (totals.rows + figures[0], totals.completions + (figures.count > 1 ? figures[1] : 0))
    }

    /// Everything that must hold after a kill; returns what does not.
    static func check(_ cli: CLI) throws -> [String] {
        var problems: [String] = []
        let integrity = try CLI.sqlite(cli.database, "PRAGMA integrity_check;")
        if integrity != "ok\n" { problems.append("integrity_check: \(integrity)") }
        let database = try OnboardingDatabase.open(path: cli.database)
        let product = LockedInCatalog.product
        let rebuilt = try JournalReplay.rebuild(
            app: LockedInCatalog.app, engine: product.engine, from: database)
        let stored = try database.storedFlows(app: LockedInCatalog.app).mapValues {
            $0.filter { $0.value != FlowState() }
        }.filter { !$0.value.isEmpty }
        if rebuilt != stored { problems.append("stored flows differ from the journal's rebuild") }
        // Each user's domain is the journal's committed side effects, applied once each, in order.
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        var domains: [String: [String: TourValue]] = [:]
        for row in try database.journal(app: LockedInCatalog.app) {
            let effects = try decoder.decode([TourEffect].self, from: Data(row.effectsJSON.utf8))
            let activations = effects.filter {
                if case .product(let p) = $0 { p.name == "activate" } else { false }
            }
            let completed = row.outcome.contains("onboarding completed")
            if activations.count != (completed ? 1 : 0) {
                problems.append(
                    "journal row \(row.id) has \(activations.count) bank grants for '\(row.outcome)'")
            }
            for case .product(let effect) in effects {
                product.handler.apply(effect, to: &domains[row.user, default: [:]], now: row.time)
            }
        }
        for (user, domain) in domains {
            let session = try database.session(
                SessionKey(app: LockedInCatalog.app, user: user), scopes: product.scopes)
            if session.domain != domain {
                problems.append("\(user)'s stored domain \(session.domain) is not its journal's \(domain)")
            }
        }
        let next = try cli.run("status", "--json", "--user", "user0")
        if next.status != 0 { problems.append("the next command failed: \(next.stderr)") }
        return problems
    }
}
