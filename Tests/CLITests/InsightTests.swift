import Foundation
import TestThreads
import Testing
import TourFixtures

/// `report`, `explain` and `graph`, through the built executables, on databases filled by real flows.
@Suite("Funnel report, eligibility explanation, flow diagrams", .ownThread)
struct InsightTests {
    /// Four Growth users: two complete the tour, one skips on its second step, one stops on its third.
    /// Runs `report --html PAGE` (and `arguments`), checks the page is self-contained (no script,
    /// nothing loaded from anywhere) and returns it.
    static func selfContainedPage(_ cli: CLI, _ page: URL, _ arguments: [String] = []) throws -> String {
        let written = try cli.run(["report"] + arguments + ["--html", page.path])
        #expect(written.status == 0, "\(written.stderr)")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        for forbidden in ["<script", "src=", "http://", "https://", "@import", "url("] {
            #expect(!html.contains(forbidden), "\(forbidden)")
        }
        return html
    }

    static func growthWithFourUsers() throws -> CLI {
        let cli = try CLI("growth")
        let start = "visit dashboard\ndo completeOnboarding\nvisit dashboard\n"
        let scripts = [
            ("ann", start + "wait 4\nnext\nwait 2\nnext\nnext\nnext\nnext\n"),
            ("bob", start + "wait 6\nnext\nwait 1\nskip\n"),
            ("cat", start + "wait 2\nnext\nwait 3\nnext\n"),
            ("dan", start + "wait 8\nnext\nwait 4\nnext\nnext\nnext\nnext\n"),
        ]
        for (user, script) in scripts {
            let result = try cli.run("play", "--user", user, stdin: script)
            try #require(result.status == 0, "\(user): \(result.stderr)")
        }
        return cli
    }

    @Test func reportCountsStartedCompletedSkippedDropOffAndMedianTimes() throws {
        let cli = try Self.growthWithFourUsers()
        let report = try cli.json("report")
        let flow = try #require((report["flows"] as? [[String: Any]])?.first)
        #expect(flow["flow"] as? String == "app_tour")
        #expect(flow["started"] as? Int == 4)
        #expect(flow["completed"] as? Int == 2)
        #expect(flow["skipped"] as? Int == 1)
        #expect(flow["inProgress"] as? Int == 1)
        #expect(flow["completionRate"] as? Double == 0.5)
        #expect(flow["skipRate"] as? Double == 0.25)
        let steps = try #require(flow["steps"] as? [[String: Any]])
        let byStep = Dictionary(uniqueKeysWithValues: steps.map { ($0["step"] as? String ?? "", $0) })
        // Time on the dashboard card: 4, 6, 2 and 8 seconds; the median is 5.
        #expect(byStep["dashboard"]?["medianSeconds"] as? Double == 5)
        #expect(byStep["dashboard"]?["reached"] as? Int == 4)
        // Bob skipped on logSession; Cat is still on progress: in progress there, not dropped off.
        #expect(byStep["logSession"]?["droppedOff"] as? Int == 1)
        #expect(byStep["progress"]?["droppedOff"] as? Int == 0)
        #expect(byStep["progress"]?["inProgress"] as? Int == 1)
        #expect(byStep["profile"]?["droppedOff"] as? Int == 0)
        #expect(report["users"] as? Int == 4)

        let text = try cli.run("report")
        #expect(text.status == 0)
        #expect(
            text.stdout.contains(
                "app_tour (App Tour): started 4, completed 2 (50%), skipped 1 (25%), in progress 1"))
        // Numbered as the card counts; reached, in progress, dropped off.
        let row = text.stdout.split(separator: "\n").first { $0.hasPrefix("  3/5 progress") }
        #expect(row.map { Array($0.split(separator: " ").dropFirst(2).prefix(3)) } == ["3", "1", "0"])

        // The virtual clock starts on 5 January 2026: runs since the 6th are none, since the 5th all.
        #expect(
            ((try cli.json(
                "report", "--since",
                "2026-01-06")["flows"] as? [[String: Any]])?.first?["started"])
                as? Int == 0)
        #expect(
            ((try cli.json(
                "report", "--since",
                "2026-01-05")["flows"] as? [[String: Any]])?.first?["started"])
                as? Int == 4)
        let bad = try cli.run("report", "--since", "last week")
        #expect(bad.status != 0 && bad.stderr.contains("YYYY-MM-DD"))
    }

    /// `report --html FILE`: one self-contained page whose tables carry the report's numbers.
    @Test func reportHTMLWritesOneSelfContainedPageWithTheReportsNumbers() throws {
        let cli = try Self.growthWithFourUsers()
        let page = cli.folder.appendingPathComponent("report.html")
        let html = try Self.selfContainedPage(cli, page)
        #expect(html.contains("<svg"))
        // The funnel's table: started, each step in order, completed, as `report --json` counts them.
        let report = try cli.json("report")
        let flow = try #require((report["flows"] as? [[String: Any]])?.first)
        let steps = try #require(flow["steps"] as? [[String: Any]])
        var expected = [("started", flow["started"] as? Int ?? -1)]
        expected += steps.map { ("step \($0["step"] as? String ?? "")", $0["reached"] as? Int ?? -1) }
        expected.append(("completed", flow["completed"] as? Int ?? -1))
        let rows = html.components(separatedBy: "<tr><th scope=\"row\">").dropFirst().map {
            row -> (String, Int) in
            let label = String(row.prefix { $0 != "<" })
            let reached = row.components(separatedBy: "data-field=\"reached\">").dropFirst().first?.prefix {
                $0 != "<"
            }
            return (label, Int(reached ?? "") ?? -1)
        }
        #expect(rows.map(\.0) == expected.map(\.0))
        #expect(rows.map(\.1) == expected.map(\.1))
        // Refused: a folder that does not exist, a folder as the file, --html with --json; nothing written.
        let missing = try cli.run("report", "--html", cli.folder.appendingPathComponent("nope/r.html").path)
        #expect(missing.status == 2 && missing.stderr.contains("does not exist"))
        let folder = try cli.run("report", "--html", cli.folder.path)
        #expect(folder.status == 2 && folder.stderr.contains("is a folder"))
        let both = try cli.run(
            "--json", "report", "--html", cli.folder.appendingPathComponent("both.html").path)
        #expect(both.status == 2)
        #expect(!FileManager.default.fileExists(atPath: cli.folder.appendingPathComponent("both.html").path))
    }

    /// Every product's `report --html` and `report --by variant --html`: written, self-contained,
    /// with each flow's runs as `report --json` counts them; a folder nobody can write into is
    /// refused with what to do, and nothing is written.
    @Test(arguments: ["finite", "lockedin", "carrierwave", "growth", "moodtracker"])
    func everyProductsReportHTMLCarriesItsReportsNumbers(_ product: String) throws {
        let cli = try CLI(product)
        // The product's own happy path (its golden transcript's script).
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let script = root.appendingPathComponent(
            "Apps/\(registeredProductFolders[product] ?? product)/Transcripts/happy-path.play")
        let played = try cli.run("play", script.path)
        try #require(played.status == 0, "\(played.stderr)")
        let html = try Self.selfContainedPage(cli, cli.folder.appendingPathComponent("report.html"))
        // The runs table: one row per flow, its Started cell as the JSON report counts it.
        let flows = try #require(try cli.json("report")["flows"] as? [[String: Any]])
        #expect(flows.contains { ($0["started"] as? Int ?? 0) > 0 }, "the script started a flow")
        let runs =
            html.components(separatedBy: "<caption id=\"s1\">Runs of each flow</caption>").dropFirst().first
            ?? ""
        let started = runs.components(separatedBy: "</table>")[0].components(separatedBy: "<tr><td>")
            .dropFirst().map { row in
                Int(
                    row.components(separatedBy: "<td class=\"n\">").dropFirst().first?.prefix { $0 != "<" }
                        ?? "") ?? -1
            }
        #expect(started == flows.map { $0["started"] as? Int ?? -2 })

        _ = try Self.selfContainedPage(
            cli, cli.folder.appendingPathComponent("variants.html"), ["--by", "variant"])

        // /proc/1 is a folder that not even root can make a file in.
        let refused = try cli.run("report", "--html", "/proc/1/report.html")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--html could not write '/proc/1/report.html'"))
        #expect(refused.stderr.contains("give a FILE in a folder you can write to"))
        #expect(!FileManager.default.fileExists(atPath: "/proc/1/report.html"))
    }

    @Test func reportAnswersMoodTrackersCompletionVersusSkip() throws {
        let cli = try CLI("moodtracker")
        try cli.run("play", stdin: "launch\nwait 0.5\nskip\n")
        try cli.run("play", stdin: "launch\nwait 0.5\nwait 3\nnext\nnext\nnext\n")
        let flow = try #require((try cli.json("report")["flows"] as? [[String: Any]])?.first)
        // Skip records nothing, so the tutorial showed again and was completed: two runs.
        #expect(flow["started"] as? Int == 2)
        #expect(flow["skipped"] as? Int == 1)
        #expect(flow["completed"] as? Int == 1)
    }

    @Test func explainSaysWhyEachFlowWillOrWillNotShow() throws {
        let cli = try CLI("growth")
        func verdict(_ arguments: String...) throws -> [String: Any] {
            try #require((try cli.json(["explain"] + arguments)["flows"] as? [[String: Any]])?.first)
        }
        try cli.run("visit", "dashboard")
        var tour = try verdict()
        #expect(tour["verdict"] as? String == "notShown")
        #expect((tour["reason"] as? String)?.contains("onboardingComplete (is false)") == true)
        try cli.run("do", "completeOnboarding")
        tour = try verdict("app_tour")
        #expect(tour["verdict"] as? String == "eligible")
        #expect(tour["reason"] as? String == "will show on visit dashboard")
        try cli.run("play", stdin: "visit dashboard\nnext\n")
        #expect(try verdict()["verdict"] as? String == "showing")
        try cli.run("do", "skip")
        tour = try verdict()
        #expect(tour["status"] as? String == "skipped")
        #expect(tour["finishedAt"] as? Double != nil)
        let text = try cli.run("explain")
        #expect(
            text.stdout.contains(
                "app_tour (App Tour): not shown: skipped; it cannot be replayed at 2026-01-05T09:00:00Z"))
        #expect(
            text.stdout.contains(
                """
                app_tour (App Tour): not shown: skipped; it cannot be replayed at \
                2026-01-05T09:00:00Z\n  trigger visit dashboard: onboardingComplete (is true) = yes
                """
            ))
        let unknown = try cli.run("explain", "nosuch")
        #expect(unknown.status != 0 && unknown.stderr.contains("Flows: app_tour"))
    }

    @Test func explainNamesTheVersionsBehindAnUpdatePrompt() throws {
        let cli = try CLI("carrierwave")
        try cli.run("play", stdin: "launch --app-version 1.9\nskip\nvisit challenges\nnext\n")
        let before = try cli.run("explain", "whats_new_2_5")
        #expect(before.stdout.contains("upgraded into 2.5 (last tour finished in 1.9, app version 1.9) = no"))
        let challenges = try cli.run("explain", "challenges")
        #expect(challenges.stdout.contains("challenges (Challenges): not shown: completed in version 1.9"))
        try cli.run("launch", "--app-version", "2.5")
        let after = try cli.json("explain", "whats_new_2_5")
        let flow = try #require((after["flows"] as? [[String: Any]])?.first)
        // Upgrading from 1.9 straight to 2.5 shows 2.5's What's New only (2.5 is in the list).
        #expect(flow["verdict"] as? String == "showing")
        let skipped = try cli.run("explain", "whats_new_2_0")
        #expect(
            skipped.stdout.contains("upgraded into 2.0 (last tour finished in 1.9, app version 2.5) = no"))
        try cli.run("do", "dismiss")
        let now = try #require((try cli.json("explain", "whats_new_2_5")["flows"] as? [[String: Any]])?.first)
        #expect(now["reason"] as? String == "not shown: completed in version 2.5; it cannot be replayed")
    }

    /// Every registered product, with its folder under Apps/.
    static let products = registeredProducts.map {
        ($0.executable, registeredProductFolders[$0.executable] ?? "")
    }

    /// A product's page: `Docs/<Folder>.md` once the team has written one, else its folder's
    /// README.md (what scripts/new-product writes), as `scripts/products.py` finds it.
    static func page(of folder: String) -> String {
        let docs = "Docs/\(folder).md"
        return FileManager.default.fileExists(atPath: GrammarTests.packageRoot + "/" + docs)
            ? docs : "Apps/\(folder)/README.md"
    }

    /// `graph` says what a gate holds back: an optional permission is marked optional and moves
    /// nothing, an action that waits for the required gates names them, a gate that moves the step
    /// on when granted says so; and a step a condition leaves out has the edge that goes around it.
    @Test func graphSaysWhatAGateHoldsBackAndDrawsTheEdgeAroundALeftOutStep() throws {
        let lockedIn = try CLI("lockedin").run("graph", "--flow", "onboarding").stdout
        #expect(lockedIn.contains("asks screenTime, health (optional)"), "\(lockedIn)")
        #expect(
            lockedIn.contains(
                #"onboarding_permissions -->|"next once screenTime granted"| onboarding_activation"#),
            "\(lockedIn)")
        #expect(!lockedIn.contains("health granted"), "\(lockedIn)")
        let carrierWave = try CLI("carrierwave").run("graph", "--flow", "intro").stdout
        #expect(
            carrierWave.contains(#"intro_connectQRZ -->|"next, connection granted"| intro_moreServices"#),
            "\(carrierWave)")
        #expect(
            carrierWave.contains(
                #"intro_howSyncWorks -.->|"connectQRZ left out when hasConnectedService"| intro_moreServices"#
            ),
            "\(carrierWave)")
    }

    /// Each product page embeds the Mermaid of each of its flows, as `graph` generates it now.
    @Test(arguments: products)
    func theCommittedDiagramsAreTheGeneratedOnes(_ product: (String, String)) throws {
        let cli = try CLI(product.0)
        let page = Self.page(of: product.1)
        let regenerate = "scripts/regen-product \(product.1)"
        guard let text = try? String(contentsOfFile: GrammarTests.packageRoot + "/" + page, encoding: .utf8)
        else {
            Issue.record(
                """
                \(product.0) has no page (Docs/\(product.1).md or Apps/\(product.1)/README.md): write \
                one with \(regenerate)
                """
            )
            return
        }
        let flows = try cli.run("graph").stdout.components(separatedBy: "\n\n").count
        let blocks = text.components(separatedBy: "<!-- graph: ").dropFirst()
        #expect(
            blocks.count == flows,
            "\(page) has \(blocks.count) diagrams for \(flows) flows; regenerate them with \(regenerate)")
        for block in blocks {
            let flow = String(block.prefix { $0 != " " })
            let committed =
                block.components(separatedBy: "```mermaid\n").dropFirst().first?
                .components(separatedBy: "\n```").first ?? ""
            let generated = try cli.run("graph", "--flow", flow).stdout.trimmingCharacters(in: .newlines)
            #expect(
                committed == generated,
                """
                \(page): the diagram of \(flow) differs from `\(product.0) graph --flow \(flow)`; \
                regenerate it with \(regenerate)
                """
            )
        }
        let dot = try cli.run("graph", "--format", "dot")
        #expect(dot.status == 0 && dot.stdout.hasPrefix("digraph "))
        let bad = try cli.run("graph", "--format", "svg")
        #expect(bad.status != 0 && bad.stderr.contains("mermaid or dot"))
    }
}
