import Foundation
import InsightsPages
import OnboardingServer
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures

/// The flow page as a product manager reads it, in a real headless Chromium against
/// the real server, PostgreSQL and real CLI devices of three products: some completing, some
/// skipping, some abandoning, two app versions, two locales, two device kinds, one experiment.
/// Every number is checked against the test's own tally of the devices' journals.
@Suite("Journeys on the dashboard", .serialized, .ownThread)
struct JourneyDashboardTests {
    @Test func aProductManagerReadsConversionsSkipsTimesSplitsTrendAndTheSubjectsBehindThem() async throws {
        let server = try ServerProcess()
        let admin = try server.operatorCredential()
        try await ExperimentTests.publishGrowthTourLength(on: server, by: admin)

        // Mood Tracker's and Finite's compiled catalogs, as their releases register them (the step titles).
        for (app, folder) in [("moodtracker", "MoodTracker"), ("finite", "Finite")] {
            try Self.registerReleases(app, folder: folder, on: server)
        }
        // Mood Tracker: two locales, two app versions, two device kinds, VoiceOver on one; each
        // device's script completes, skips or stops somewhere; two start a week later.
        let moods: [(account: String, options: [String], kind: String, script: [String])] = [
            (
                "m-ann", ["--locale", "en", "--app-version", "1.0"], "phone",
                ["launch", "wait 0.5", "do next", "wait 3", "do next", "wait 5", "do next"]
            ),
            (
                "m-bea", ["--locale", "pt-BR", "--app-version", "2.0"], "tablet",
                ["launch", "wait 0.5", "do skip"]
            ),
            (
                "m-cai", ["--locale", "pt-BR", "--app-version", "2.0"], "phone",
                ["launch", "wait 0.5", "wait 2", "do next"]
            ),
            (
                "m-dan", ["--locale", "en", "--app-version", "1.0", "--context", "voiceOver=true"], "phone",
                ["wait 691200", "launch", "wait 0.5", "do next", "wait 1", "do next", "do next"]
            ),
            (
                "m-eve", ["--locale", "en", "--app-version", "2.0"], "tablet",
                ["launch", "wait 0.5", "do next", "wait 2", "do skip"]
            ),
            (
                "m-fay", ["--locale", "pt-BR", "--app-version", "1.0"], "phone",
                ["wait 604800", "launch", "wait 0.5", "do next", "wait 10", "do next", "wait 1", "do next"]
            ),
            ("m-gus", ["--locale", "en", "--app-version", "1.0"], "phone", ["launch", "wait 0.5"]),
        ]
        var moodDevices: [Device] = []
        for mood in moods {
            let device = Self.virtual(
                try Device("moodtracker", account: mood.account, server: server), kind: mood.kind)
            // The app version is said at launch (`launch --app-version`) and kept; the locale and
            // context with every command, as an app reports them.
            let common = [mood.options[0], mood.options[1]] + Array(mood.options.dropFirst(4))
            for line in mood.script {
                let words = line.split(separator: " ").map(String.init) + common
                let result = try device.run(
                    line == "launch" ? words + [mood.options[2], mood.options[3]] : words)
                #expect(result.status == 0, "\(mood.account) \(line): \(result.stderr)")
            }
            #expect(try device.run(["sync"] + common).status == 0)
            moodDevices.append(device)
        }
        // Finite: completes, skips at the first card, stops at the third.
        var finiteDevices: [Device] = []
        for (account, script) in [
            ("f-ada", ["launch", "wait 1.5"] + Array(repeating: "advance", count: 8)),
            ("f-bob", ["launch", "wait 1.5", "do skip"]),
            ("f-cy", ["launch", "wait 1.5", "wait 4", "advance", "wait 7", "advance"]),
        ] {
            let device = Self.virtual(try Device("finite", account: account, server: server), kind: "phone")
            for line in script {
                if line == "advance" {
                    guard try Self.advance(device) else { break }
                } else {
                    #expect(
                        try device.run(line.split(separator: " ").map(String.init)).status == 0,
                        "\(account) \(line)")
                }
            }
            #expect(try device.run("sync").status == 0)
            finiteDevices.append(device)
        }
        // Growth, on the wall clock (its assignments count in the last 7 days): the tour under the
        // experiment; the control's first completes, the rest stop after one step.
        let declared = Experiment(
            "tourLength",
            variants: [
                .init("full", weight: 50),
                .init("short", weight: 50, shows: .steps(["dashboard", "profile"])),
            ])
        var growthDevices: [Device] = []
        var completedControl = false
        for account in ["g-1", "g-2", "g-3", "g-4", "g-5", "g-6", "g-7", "g-8"] {
            let device = try Device("growth", account: account, server: server)
            #expect(try device.run("status").status == 0)
            #expect(try device.run("do", "completeOnboarding").status == 0)
            #expect(try device.run("visit", "dashboard").status == 0)
            let variant = try #require(declared.assign("account:\(account)")).name
            if variant == "full" && !completedControl {
                completedControl = true
                while try device.flowStatus("app_tour") == "active" { try device.run("do", "next") }
            } else {
                try device.run("do", "next")
            }
            #expect(try device.run("sync").status == 0)
            growthDevices.append(device)
        }
        try await DashboardTests.waitUntilCounted(server)

        let browser = try Browser()
        try Self.signIn(browser, server, admin)
        #expect(browser.location.hasSuffix("/dashboard"))
        // Every page passes the audit of Chromium's accessibility tree (labels, headings, contrast).
        #expect(try AccessibilityAudit.problems(browser) == [], "the overview")
        try browser.open(server.url.appendingPathComponent("dashboard/apps/moodtracker"))
        #expect(try AccessibilityAudit.problems(browser) == [], "the app's page")

        // Mood Tracker's tutorial: every stage's numbers as the devices' journals say.
        let moodJourneys = try moodDevices.map { try Self.journey($0, flow: "tutorial") }
        let flowURL = server.url.appendingPathComponent("dashboard/apps/moodtracker/flows/tutorial")
        try browser.open(flowURL)
        let rows = try Self.funnelRows(browser)
        let expected = Self.expectedStages(moodJourneys)
        #expect(rows.map { $0[0] } == expected.map(\.label))
        #expect(expected.count >= 4 && expected[0].reached == moods.count)
        for (row, stage) in zip(rows, expected) {
            #expect(row[1] == "\(stage.reached)", "reached at \(stage.label)")
            #expect(row[2] == "\(stage.skipped)", "skipped at \(stage.label)")
            #expect(row[3] == "\(stage.abandoned)", "abandoned at \(stage.label)")
            #expect(
                row[4] == InsightsPageText.percent(Double(stage.reached) / Double(expected[0].reached)),
                "from first at \(stage.label)")
            #expect(row[6] == (stage.p50.map(String.init) ?? ""), "median at \(stage.label)")
            #expect(row[7] == (stage.p75.map(String.init) ?? ""), "p75 at \(stage.label)")
        }
        for index in rows.indices.dropFirst() {
            #expect(
                rows[index][5]
                    == InsightsPageText.percent(
                        Double(expected[index].reached) / Double(expected[index - 1].reached)))
        }
        #expect(
            expected.map(\.skipped).reduce(0, +) == 2 && expected.map(\.abandoned).reduce(0, +) >= 2,
            "the population skips and abandons")
        // Titles beside ids, in the catalog's source language.
        let titles = try #require(
            try browser.evaluate(
                """
                [...document.querySelectorAll('table[data-chart=funnel] tbody tr \
                td:nth-of-type(1)')].map(c => c.textContent)
                """
            ) as? [String])
        #expect(titles.contains("Swipe to Select"), "\(titles)")
        #expect(try AccessibilityAudit.problems(browser) == [], "the flow's page")
        // The trend's legend is in the page, its axes labelled with several ticks; charts have text
        // alternatives.
        #expect(
            try browser.evaluate(
                "document.querySelector('section:has(table[data-chart=cohorts]) ul.legend').textContent")
                as? String
                == " Completion rate Its 95% interval")
        #expect(
            (try browser.evaluate(
                "document.querySelectorAll('section:has(table[data-chart=cohorts]) svg text').length") as? Int
                ?? 0) >= 6)
        #expect(
            try browser.evaluate(
                """
                [...document.querySelectorAll('svg[role=img]')].every(s => \
                s.querySelector('title').textContent.length > 20)
                """
            ) as? Bool == true)
        #expect(
            try browser.evaluate("document.querySelector('input[name=from]').getAttribute('placeholder')")
                as? String == "YYYY-MM-DD")
        try DashboardTests().saveScreenshot(browser, "dashboard-journeys")

        // Splits on one scale: by locale and by app version, each cell as the journals say.
        for (split, value) in [
            ("locale", { (index: Int) in moods[index].options[1] }),
            ("app", { (index: Int) in moods[index].options[3] }),
        ] {
            try browser.leave {
                _ = try browser.evaluate(
                    "document.querySelector('nav.choices a[href*=\"split=\(split)&\"]').click()")
            }
            let cells = try #require(
                try browser.evaluate(
                    """
                    [...document.querySelectorAll('table[data-chart=split] tbody tr')].map(r => \
                    [...r.querySelectorAll('td')].map(c => c.dataset.reached + '/' + c.dataset.started))
                    """
                )
                    as? [[String]])
            let values = Set(moods.indices.map(value)).sorted()
            for (stageIndex, stage) in expected.enumerated() {
                let want = values.map { given -> String in
                    let members = moodJourneys.indices.filter { value($0) == given }.map { moodJourneys[$0] }
                    let reached =
                        stage.label == "started"
                        ? members.count
                        : stage.label == "completed"
                            ? members.filter { $0.completedAt != nil }.count
                            : members.filter { $0.reaches[String(stage.label.dropFirst(5))] != nil }.count
                    return "\(reached)/\(members.count)"
                }
                #expect(cells[stageIndex] == want, "\(split) at \(stage.label)")
            }
            #expect(
                try browser.evaluate("document.querySelectorAll('svg[role=img] rect.g1').length") as? Int
                    == expected.count)
            if split == "locale" { try DashboardTests().saveScreenshot(browser, "dashboard-split") }
        }
        // The weekly trend: starts and completions by week of start, as the journals say.
        let trend = try #require(
            try browser.evaluate(
                """
                [...document.querySelectorAll('table[data-chart=cohorts] tbody tr')].map(r => \
                [r.querySelector('th').textContent, r.querySelector('[data-field=started]').textContent, \
                r.querySelector('[data-field=completed]').textContent])
                """
            )
                as? [[String]])
        let weekOf = { (time: Double) -> String in
            let day = Int((time / 86_400).rounded(.down))
            let monday = day - ((day + 3) % 7)  // 1970-01-01 was a Thursday
            return DashboardExportsTests.day(Double(monday) * 86_400)
        }
        let weeks = Set(moodJourneys.compactMap { $0.start.map(weekOf) }).sorted()
        #expect(weeks.count == 2)
        #expect(
            trend
                == weeks.map { week in
                    let members = moodJourneys.filter { $0.start.map(weekOf) == week }
                    return [week, "\(members.count)", "\(members.filter { $0.completedAt != nil }.count)"]
                })

        // Drill-down: the subjects behind each abandoned and skipped count, and one's timeline.
        try browser.open(flowURL)
        let adminSession = try DashboardTests().signIn(server)
        for (stageIndex, stage) in expected.enumerated() where stage.label != "completed" {
            for (field, standing) in [("abandoned", "waiting"), ("skipped", "skipped")] {
                let step = stage.label == "started" ? "" : String(stage.label.dropFirst(5))
                let want = moodJourneys.filter {
                    $0.standing == standing
                        && (standing == "skipped" ? $0.skippedAt == step : $0.furthest == step)
                }.map(\.account).sorted()
                let href =
                    try browser.evaluate(
                        """
                        (a => a ? a.getAttribute('href') : \
                        null)(document.querySelectorAll('table[data-chart=funnel] tbody \
                        tr')[\(stageIndex)].querySelector('[data-field=\(field)] a'))
                        """
                    ) as? String
                guard !want.isEmpty else {
                    #expect(href == nil)
                    continue
                }
                let link = try #require(href, "\(field) at \(stage.label)")
                let page = try DashboardTests.curl(
                    URL(string: server.url.absoluteString + link)!, cookie: adminSession)
                let listed = want.filter {
                    page.body.contains("/dashboard/apps/moodtracker/subjects/\($0)\"")
                }
                #expect(listed == want, "\(field) at \(stage.label): \(link)")
                // Each with its journey's start, to the millisecond, then its last activity.
                for journey in moodJourneys where want.contains(journey.account) {
                    let start = Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(
                        Date(timeIntervalSince1970: journey.start ?? 0))
                    let row = "\(journey.account)</a></td><td>\(start)</td><td>"
                    #expect(page.body.contains(row), "\(journey.account) at \(stage.label): no row \(row)")
                    let last = page.body.components(separatedBy: row).dropFirst().first?.prefix(24) ?? ""
                    #expect(
                        String(last) >= start && last.hasSuffix("Z"),
                        "\(journey.account): last activity \(last) before \(start)")
                }
            }
        }
        let someone = try #require(moodJourneys.first { $0.skippedAt != nil })
        try browser.open(
            server.url.appendingPathComponent("dashboard/apps/moodtracker/subjects/\(someone.account)"))
        let timelineRows =
            try browser.evaluate(
                """
                [...document.querySelectorAll('table')].find(t => \
                t.caption.textContent.startsWith('Timeline')).querySelectorAll('tbody tr').length
                """
            ) as? Int
        #expect(timelineRows == someone.facts)
        // Times to the millisecond: several facts of one subject often fall in one second.
        let firstTime =
            try browser.evaluate(
                """
                [...document.querySelectorAll('table')].find(t => \
                t.caption.textContent.startsWith('Timeline')).querySelector('tbody td').textContent
                """
            ) as? String
        #expect(
            firstTime?.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression)
                != nil, "\(firstTime ?? "")")
        #expect(try browser.evaluate("document.body.innerText.includes('skipped')") as? Bool == true)
        try DashboardTests().saveScreenshot(browser, "dashboard-subject")
        #expect(try AccessibilityAudit.problems(browser) == [], "a subject's page")

        // Finite's walkthrough: the same numbers from another product's devices.
        try browser.open(server.url.appendingPathComponent("dashboard/apps/finite/flows/walkthrough"))
        let finiteExpected = Self.expectedStages(
            try finiteDevices.map { try Self.journey($0, flow: "walkthrough") })
        let finiteRows = try Self.funnelRows(browser)
        let finiteShown: [[String]] = finiteRows.map { (row: [String]) -> [String] in
            [row[0], row[1], row[2], row[3], row[6], row[7]]
        }
        let finiteWanted: [[String]] = finiteExpected.map { stage -> [String] in
            let p50: String = stage.p50.map { String($0) } ?? ""
            let p75: String = stage.p75.map { String($0) } ?? ""
            return [
                stage.label, String(stage.reached), String(stage.skipped), String(stage.abandoned), p50, p75,
            ]
        }
        #expect(finiteShown == finiteWanted)

        // Growth's experiment: by variant, and its sample size for a 10-point difference, as an
        // independent computation (the normal power function, searched) gives it, with the day each
        // variant gets there at today's pace.
        let growthJourneys = try growthDevices.map { try Self.journey($0, flow: "app_tour") }
        try browser.open(
            URL(
                string: server.url.absoluteString
                    + "/dashboard/apps/growth/flows/app_tour?split=variant&effect=10")!)
        let control = growthJourneys.filter { $0.variant == "full" }
        let baseline = Double(control.filter { $0.completedAt != nil }.count) / Double(control.count)
        let needed = Self.powerSearch(baseline: baseline, effect: 0.10)
        let sample = try #require(
            try browser.evaluate(
                """
                [...document.querySelectorAll('table[data-chart=sample] tbody tr')].map(r => \
                [r.querySelector('th').textContent, \
                r.querySelector('[data-field=assigned]').textContent, \
                r.querySelector('[data-field=needed]').textContent, \
                r.querySelector('[data-field=lastWeek]').textContent, \
                r.querySelector('[data-field=expected]').textContent])
                """
            )
                as? [[String]])
        let today = Int((Date().timeIntervalSince1970 / 86_400).rounded(.down))
        #expect(sample.map(\.[0]).sorted() == ["full", "short"])
        for row in sample {
            let assigned = growthJourneys.filter { $0.variant == row[0] }.count
            let days = Int((Double(needed - assigned) * 7 / Double(assigned)).rounded(.up))
            #expect(
                row == [
                    row[0], "\(assigned)", "\(needed)", "\(assigned)",
                    DashboardExportsTests.day(Double(today + days) * 86_400),
                ])
        }
        let variantCells = try #require(
            try browser.evaluate(
                "[...document.querySelectorAll('table[data-chart=split] thead th')].map(c => c.textContent)")
                as? [String])
        #expect(variantCells == ["Stage", "full", "short"])
        try DashboardTests().saveScreenshot(browser, "dashboard-experiment")

        // A viewer sees counts, not who is behind them.
        let viewer = try server.credential("vic", role: "viewer", app: "moodtracker")
        let viewerSession = try DashboardTests().signIn(server, credential: viewer)
        let viewed = try DashboardTests.curl(flowURL, cookie: viewerSession)
        #expect(viewed.status == 200)
        #expect(!viewed.body.contains("/subjects"))
        let refused = try DashboardTests.curl(
            URL(string: flowURL.absoluteString + "/subjects?step=&standing=abandoned")!, cookie: viewerSession
        )
        #expect(refused.status == 403)
        #expect(
            try DashboardTests.curl(
                server.url.appendingPathComponent("dashboard/apps/moodtracker/subjects/m-ann"),
                cookie: viewerSession
            ).status == 403)
    }
}
