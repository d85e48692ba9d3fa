import Foundation
import TestThreads
import Testing
import TourFixtures

/// The family's display budget across an account's devices (Docs/DisplayBudget.md): each device's
/// products share a budget file, and the devices share their counts through the real server.
@Suite("Display budget across devices", .ownThread)
struct DisplayBudgetAcrossDevicesTests {
    /// One device of an account: each product's real executable on its own database in one folder,
    /// all sharing `family.sqlite` there, on the virtual clock, syncing with the server.
    struct FamilyDevice {
        let folder: URL
        let account: String
        let server: ServerProcess
        let budget: String
        private let tokens: [String: String]

        init(_ products: [String], account: String, server: ServerProcess, budget: String) throws {
            folder = Scratch.folder.appendingPathComponent("family-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            self.account = account
            self.server = server
            self.budget = budget
            var tokens: [String: String] = [:]
            for product in products { tokens[product] = try server.token(account: account, app: product) }
            self.tokens = tokens
        }

        var budgetFile: String { folder.appendingPathComponent("family.sqlite").path }

        @discardableResult
        func run(_ product: String, _ arguments: [String], stdin: String? = nil, offline: Bool = false) throws
            -> Shell.Result
        {
            var environment = BuiltExecutables.environment
            environment["ONBOARDING_DB"] = folder.appendingPathComponent("\(product).sqlite").path
            environment["ONBOARDING_BUDGET_DB"] = budgetFile
            environment["ONBOARDING_BUDGET"] = budget
            environment["ONBOARDING_CLOCK"] = "virtual"
            environment["ONBOARDING_SERVER"] = server.url.absoluteString
            environment["ONBOARDING_TOKEN"] = tokens[product]
            return try Shell.run(
                BuiltExecutables.folder.appendingPathComponent(product).path,
                arguments + ["--user", account] + (offline ? ["--offline"] : []), environment: environment,
                stdin: stdin)
        }

        /// Every start this device's budget file counted: (app, time).
        func starts() throws -> [(app: String, at: Double)] {
            let result = try Shell.run(
                "/usr/bin/sqlite3", [budgetFile, "SELECT app, at FROM budget_start ORDER BY at;"])
            return result.stdout.split(separator: "\n").compactMap { line in
                let parts = line.split(separator: "|").map(String.init)
                return parts.count == 2 ? Double(parts[1]).map { (parts[0], $0) } : nil
            }
        }
    }

    static let products = ["finite", "lockedin", "moodtracker"]

    /// The server's family: the apps whose tokens may write the display budget.
    static let family = ["ONBOARDING_BUDGET_FAMILY": "finite,lockedin,carrierwave,growth,moodtracker"]

    /// Finite, LockedIn and Mood Tracker on a phone and a tablet of one account for a simulated
    /// week. Each day the phone launches them at 0 h and 4 h, the tablet at 0.5 h and 2 h; whatever
    /// shows is skipped. Alone, each device would start two flows a day, one of them half an hour
    /// after the other device's. Together they hold to the account's two a day and hour between.
    @Test func twoDevicesOverAWeekHoldToTheAccountsBudget() throws {
        let server = try ServerProcess(environment: Self.family)
        let phone = try FamilyDevice(
            Self.products, account: "ann", server: server, budget: "perDay=2,coolDown=3600")
        let tablet = try FamilyDevice(
            Self.products, account: "ann", server: server, budget: "perDay=2,coolDown=3600")
        let slots: [(hour: Double, device: FamilyDevice, name: String)] = [
            (0, phone, "phone"), (0.5, tablet, "tablet"), (2, tablet, "tablet"), (4, phone, "phone"),
        ]
        var now: [String: Double] = [:]
        for day in 0..<7 {
            for slot in slots {
                for (index, product) in Self.products.enumerated() {
                    let clock = "\(slot.name)/\(product)"
                    let target = Double(day) * 86_400 + slot.hour * 3600 + Double(index) * 60
                    let played = try slot.device.run(
                        product, ["play"], stdin: "wait \(target - now[clock, default: 0])\nlaunch\nwait 2\n")
                    #expect(played.status == 0, "\(clock) day \(day): \(played.stderr)")
                    now[clock] = target + 2
                    let shown = try slot.device.run(product, ["show", "--json"])
                    if shown.stdout.contains("\"skip\"") {
                        #expect(
                            try slot.device.run(product, ["do", "skip"]).status == 0, "\(clock) day \(day)")
                    }
                }
            }
        }
        let phoneStarts = try phone.starts()
        let tabletStarts = try tablet.starts()
        let all = (phoneStarts + tabletStarts).sorted { $0.at < $1.at }
        let perDay = Dictionary(grouping: all, by: { Int($0.at / 86_400) }).mapValues(\.count)
        #expect(
            perDay.values.allSatisfy { $0 <= 2 },
            "more than two starts in a day across the devices: \(perDay)")
        for (earlier, later) in zip(all, all.dropFirst()) {
            #expect(later.at - earlier.at >= 3600, "two starts within the hour across the devices: \(all)")
        }
        #expect(!phoneStarts.isEmpty && !tabletStarts.isEmpty, "both devices had turns: \(all)")
        #expect(all.count >= 7, "the budget let flows through on later days: \(all)")
        // The server holds each device's count per day, and they add up to the devices' own.
        let counted = try server.sql(
            "SELECT coalesce(sum(starts), 0) FROM budget_counts WHERE account = 'ann'")
        #expect(counted == ["\(all.count)"], "server \(counted), devices \(all.count)")
        #expect(try server.sql("SELECT count(DISTINCT device) FROM budget_counts") == ["2"])
    }

    /// An offline tablet holds to what it last heard, then, back online, tells its starts and learns
    /// the phone's: a start it made offline counts for the phone's next launch. Each device alone
    /// would start a second flow (one of two a day); together they have spent the day's two.
    @Test func anOfflineDeviceCatchesUpInBothDirections() throws {
        let server = try ServerProcess(environment: Self.family)
        let budget = "perDay=2,coolDown=0"
        let phone = try FamilyDevice(
            ["finite", "moodtracker"], account: "bo", server: server, budget: budget)
        let tablet = try FamilyDevice(
            ["finite", "moodtracker"], account: "bo", server: server, budget: budget)
        // The tablet, offline, shows Mood Tracker's first run: one of the day's two starts.
        let offline = try tablet.run("moodtracker", ["play"], stdin: "launch\nwait 1\n", offline: true)
        #expect(offline.stdout.contains("Swipe to Select"), "\(offline.stdout) \(offline.stderr)")
        #expect(try server.sql("SELECT count(*) FROM budget_counts") == ["0"])
        // The phone has not heard of it: its Finite walkthrough starts, the day's second.
        #expect(
            try phone.run("finite", ["play"], stdin: "launch\nwait 2\n").stdout.contains("Your Life in Weeks")
        )
        // Back online, the tablet's next command tells its start and learns the phone's.
        let explained = try tablet.run("finite", ["play"], stdin: "wait 7200\nlaunch\nwait 2\nexplain\n")
        #expect(!explained.stdout.contains("Your Life in Weeks"), "\(explained.stdout)")
        #expect(
            explained.stdout.contains("held back by the display budget"),
            "the tablet's Finite: \(explained.stdout)")
        #expect(try server.sql("SELECT sum(starts) FROM budget_counts WHERE account = 'bo'") == ["2"])
        // The phone learns the tablet's offline start too: its Mood Tracker waits for tomorrow.
        let mood = try phone.run("moodtracker", ["play"], stdin: "wait 7200\nlaunch\nwait 1\nexplain\n")
        #expect(!mood.stdout.contains("Swipe to Select"), "\(mood.stdout)")
        #expect(mood.stdout.contains("held back by the display budget"), "\(mood.stdout)")
        let tomorrow = try phone.run("moodtracker", ["play"], stdin: "wait 86400\nlaunch\nwait 1\n")
        #expect(tomorrow.stdout.contains("Swipe to Select"), "\(tomorrow.stdout)")
    }

    /// The exchange's refusals change nothing; a count only grows; another account's token is refused.
    @Test func theBudgetRouteRefusesBadExchangesAndKeepsTheLargerCount() async throws {
        let server = try ServerProcess(environment: Self.family)
        let token = try server.token(account: "cy", app: "finite")
        let url = server.url.appendingPathComponent("v1/apps/finite/accounts/cy/budget")
        func exchange(_ json: String, token: String? = token) async throws -> HTTP.Answer {
            try await HTTP.post(url, token: token, body: Data(json.utf8))
        }
        let day = 20_458
        let start = Double(day) * 86_400
        let good = try await exchange(
            #"""
            {"device": "p1", "since": \#(day - 1), "counts": [{"device": "p1", "day": \#(day), \#
            "starts": 2, "lastStart": \#(start + 600)}]}
            """#
        )
        #expect(good.status == 200, "\(String(decoding: good.body, as: UTF8.self))")
        let counts = good.json["counts"] as? [[String: Any]] ?? []
        #expect(counts.count == 1 && counts.first?["starts"] as? Int == 2)

        let refusals: [(String, String)] = [
            (
                #"""
                {"device": "p1", "since": \#(day), "counts": [{"device": "p2", "day": \#(day), \#
                "starts": 5}]}
                """#,
                "another device"
            ),
            (
                #"""
                {"device": "p1", "since": \#(day), "counts": [{"device": "p1", "day": \#(day - 1), \#
                "starts": 5}]}
                """#,
                "from since"
            ),
            (
                #"""
                {"device": "p1", "since": \#(day), "counts": [{"device": "p1", "day": \#(day), \#
                "starts": -1}]}
                """#,
                "starts is a whole number"
            ),
            (
                #"""
                {"device": "p1", "since": \#(day), "counts": [{"device": "p1", "day": \#(day), \#
                "starts": 5, "lastStart": \#(start - 1)}]}
                """#,
                "within that day"
            ),
            (
                #"""
                {"device": "p1", "since": \#(day), "counts": [{"device": "p1", "day": \#(day), \#
                "starts": 5}, {"device": "p1", "day": \#(day), "starts": 6}]}
                """#,
                "appears twice"
            ),
            (#"{"device": "<b>", "since": \#(day), "counts": []}"#, "device id"),
            (#"{"device": "p1", "since": -3, "counts": []}"#, "since is a day number"),
            (#"{"device": "p1", "counts": []}"#, "not a budget exchange"),
        ]
        for (body, message) in refusals {
            let refused = try await exchange(body)
            let text = String(decoding: refused.body, as: UTF8.self)
            #expect(refused.status == 400 && text.contains(message), "\(body): \(refused.status) \(text)")
        }
        let tooMany = (0..<32).map { #"{"device": "p1", "day": \#(day + $0), "starts": 1}"# }.joined(
            separator: ",")
        #expect(
            try await exchange(#"{"device": "p1", "since": \#(day), "counts": [\#(tooMany)]}"#).status == 400)
        // Another account's token, and no token: refused.
        let other = try server.token(account: "dee", app: "finite")
        #expect(
            try await exchange(#"{"device": "p1", "since": \#(day), "counts": []}"#, token: other).status
                == 403)
        #expect(
            try await exchange(#"{"device": "p1", "since": \#(day), "counts": []}"#, token: nil).status == 401
        )
        #expect(
            try server.sql("SELECT device, day, starts, last_start FROM budget_counts") == [
                "p1|\(day)|2|\(Int(start + 600))"
            ])

        // A lower count (a late or stale exchange) does not lower it; a retry changes nothing; a
        // token of another app of the family for the same account sees the same budget.
        _ = try await exchange(
            #"{"device": "p1", "since": \#(day), "counts": [{"device": "p1", "day": \#(day), "starts": 1}]}"#)
        _ = try await exchange(
            #"""
            {"device": "p1", "since": \#(day), "counts": [{"device": "p1", "day": \#(day), "starts": 2, \#
            "lastStart": \#(start + 600)}]}
            """#
        )
        let mood = try server.token(account: "cy", app: "moodtracker")
        let seen = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/moodtracker/accounts/cy/budget"), token: mood,
            body: Data(
                #"""
                {"device": "t1", "since": \#(day), "counts": [{"device": "t1", "day": \#(day), \#
                "starts": 1, "lastStart": \#(start + 60)}]}
                """#
                .utf8))
        let both = (seen.json["counts"] as? [[String: Any]] ?? []).map {
            "\($0["device"] ?? "")=\($0["starts"] ?? "")"
        }
        #expect(both.sorted() == ["p1=2", "t1=1"], "\(both)")

        // Days by the server's clock: today and tomorrow are taken; the day after, or the year
        // 9999, would hold every device of the account for as long, and are refused.
        let today = Int(Date().timeIntervalSince1970 / 86_400)
        for (ahead, status) in [(0, 200), (1, 200), (2, 400), (40, 400), (2_932_896 - today, 400)] {
            let answer = try await exchange(
                #"""
                {"device": "p1", "since": \#(today + ahead), "counts": [{"device": "p1", \#
                "day": \#(today + ahead), "starts": 1}]}
                """#
            )
            #expect(
                answer.status == status,
                "\(ahead) days ahead: \(String(decoding: answer.body, as: UTF8.self))")
            if status == 400 {
                #expect(
                    String(decoding: answer.body, as: UTF8.self).contains(
                        "the server's today and one day more"))
            }
        }
        // An app outside the family writes none of it, whatever its token says.
        let outsider = try server.token(account: "cy", app: "weather")
        let refused = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/weather/accounts/cy/budget"), token: outsider,
            body: Data(
                #"""
                {"device": "w1", "since": \#(day), "counts": [{"device": "w1", "day": \#(day), \#
                "starts": 50}]}
                """#
                .utf8))
        #expect(refused.status == 403 && refused.errorCode == "not_in_family")
        #expect(try server.sql("SELECT count(*) FROM budget_counts WHERE device = 'w1'") == ["0"])
    }

    /// Without a named family, the family is the apps registered with the server.
    @Test func withoutANamedFamilyOnlyRegisteredAppsShareTheBudget() async throws {
        let server = try ServerProcess()
        let day = 20_458
        func exchange(_ app: String) async throws -> HTTP.Answer {
            try await HTTP.post(
                server.url.appendingPathComponent("v1/apps/\(app)/accounts/cy/budget"),
                token: try server.token(account: "cy", app: app),
                body: Data(#"{"device": "d1", "since": \#(day), "counts": []}"#.utf8))
        }
        #expect(try await exchange("finite").errorCode == "not_in_family")
        let compiled = try Shell.run(
            BuiltExecutables.folder.appendingPathComponent("finite").path, ["catalog", "--json"]
        ).stdout
        let file = Scratch.folder.appendingPathComponent("finite-\(UUID().uuidString).json")
        try compiled.write(to: file, atomically: true, encoding: .utf8)
        let registered = try server.command(["register", "--app", "finite", file.path])
        #expect(registered.status == 0, "\(registered.stderr)")
        #expect(try await exchange("finite").status == 200)
        #expect(try await exchange("weather").status == 403)
    }

    /// A tablet whose clock runs 40 days ahead starts a flow; the account's phone, on the right
    /// day, is not held by it (neither by its count nor by a cool-down from its future start).
    @Test func aTabletWhoseClockRunsAheadHoldsOnlyItself() throws {
        let server = try ServerProcess(environment: Self.family)
        let budget = "perDay=1,coolDown=86400"
        let phone = try FamilyDevice(
            ["finite", "moodtracker"], account: "ed", server: server, budget: budget)
        let tablet = try FamilyDevice(
            ["finite", "moodtracker"], account: "ed", server: server, budget: budget)
        // Both clocks start at the same day; the tablet's runs 40 days ahead.
        let ahead = try tablet.run("moodtracker", ["play"], stdin: "wait \(40 * 86_400)\nlaunch\nwait 1\n")
        #expect(ahead.stdout.contains("Swipe to Select"), "\(ahead.stdout) \(ahead.stderr)")
        #expect(try server.sql("SELECT count(*) FROM budget_counts WHERE account = 'ed'") == ["1"])
        // The phone learns of it, and its own first run still starts.
        let phoneRun = try phone.run("finite", ["play"], stdin: "wait 3600\nlaunch\nwait 2\nexplain\n")
        #expect(phoneRun.stdout.contains("Your Life in Weeks"), "\(phoneRun.stdout)")
        #expect(!phoneRun.stdout.contains("held back by the display budget"), "\(phoneRun.stdout)")
    }
}
