import AccountSync
import Foundation
import OnboardingServer
import Testing
import TourCodec
import TourCore
import TourFixtures

extension DashboardTests {
    // MARK: - Aggregates

    @Test func theAggregatesEqualTheTestsOwnCountsAndAFullScanAfterConcurrentRetriedPushes() async throws {
        let server = try ServerProcess()
        let population = Population(app: "growth", count: 120, seed: 7)
        try await population.push(to: server)
        let admin = try server.operatorCredential()
        let report = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: admin
        ).json
        #expect(report["accounts"] as? Int == population.accounts.count)
        #expect(report["devices"] as? Int == population.accounts.map(\.devices.count).reduce(0, +))
        let welcome = try #require(
            (report["flows"] as? [[String: Any]])?.first { $0["flow"] as? String == "welcome" })
        let expected = population.expectedStages
        #expect(welcome["started"] as? Int == expected[0].1)
        #expect(welcome["completedHere"] as? Int == expected.last!.1)
        #expect(welcome["skippedHere"] as? Int == population.accounts.filter { $0.ending == "skipped" }.count)
        #expect(
            (welcome["steps"] as? [[String: Any]])?.map { $0["accounts"] as? Int ?? -1 }
                == expected.dropFirst().dropLast().map(\.1))
        // The same numbers by scanning every fact, as the report did before the aggregates.
        let scan = try server.sql(
            """
            SELECT count(DISTINCT account) FILTER (WHERE kind = 'flowStarted') || ' ' ||
                count(DISTINCT account) FILTER (WHERE kind = 'flowEnded' AND ending = 'completed') || ' ' ||
                count(DISTINCT device) FROM facts WHERE app = 'growth' AND flow = 'welcome'
            """)
        #expect(scan == ["\(expected[0].1) \(expected.last!.1) \(welcome["devices"] as? Int ?? -1)"])
        let standings = try server.sql(
            """
            SELECT standing || ' ' || count(*) FROM account_flows WHERE app = 'growth' GROUP BY standing \
            ORDER BY standing
            """
        )
        let aggregated = (welcome["accounts"] as? [String: Int] ?? [:]).sorted { $0.key < $1.key }.map {
            "\($0.key) \($0.value)"
        }
        #expect(aggregated == standings)
    }

    /// A long transaction elsewhere on the same PostgreSQL (another database: a dump, another
    /// service, another test) does not hold the report back; one in the server's own database does:
    /// the report answers what is counted with `Onboarding-Stale-Seconds`, and the pushes behind it
    /// are counted once it ends.
    @Test func aLongTransactionInAnotherDatabaseDoesNotHoldTheReportBack() async throws {
        let server = try ServerProcess()
        let elsewhere = try TestPostgres.freshDatabase()
        // Ended as soon as the report is read: a transaction held here holds back the watermark of
        // every test still on a schema before v10. It lasts as long as the report's patience, so a
        // count that waited for it would be read only after it ended.
        let holder = try Self.holdTransaction(on: elsewhere, seconds: 120)
        var holderEnded = false
        defer { if !holderEnded { Self.endHeldTransactions(on: elsewhere, holder) } }
        let population = Population(app: "growth", count: 12, seed: 3)
        try await population.push(to: server)
        let admin = try server.operatorCredential()
        // Asked again while it says it is stale (a loaded machine's insights job), never longer
        // than the other transaction lasts: counted while it still runs, so it did not wait for it.
        let report = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: admin
        ).json
        #expect(holder.isRunning, "the report was counted only once the other database's transaction ended")
        #expect(report["accounts"] as? Int == population.accounts.count)
        Self.endHeldTransactions(on: elsewhere, holder)
        holderEnded = true

        // The server's own database: a transaction running there holds the watermark, and what was
        // pushed behind it is counted when it ends, exactly once.
        let local = try Self.holdTransaction(on: server.databaseURL, seconds: 60)
        var more = Population(app: "growth", count: 20, seed: 4)
        more.accounts = Array(more.accounts.dropFirst(12))
        try await more.push(to: server)
        // Meanwhile the report cannot count them: after its wait it answers what is counted and
        // says so, never passing the figures off as complete.
        let short = try await HTTP.get(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: admin)
        #expect(short.status == 200)
        #expect(short.json["accounts"] as? Int == 12)
        #expect(
            (short.staleSeconds.flatMap(Int.init) ?? 0) >= 1,
            "\(short.staleSeconds ?? "no Onboarding-Stale-Seconds")")
        // Its session ended (the holder alone: the server's own connections stay).
        local.terminate()
        _ = try server.sql(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() \
            AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()
            """
        )
        let after = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: admin
        ).json
        #expect(after["accounts"] as? Int == 20)
        #expect(
            try server.sql("SELECT count(*) FROM insight_members WHERE app = 'growth' AND kind = 'account'")
                == ["20"])
    }

    @Test func aServerUpgradedWithFactsAlreadyStoredCountsThemOnce() async throws {
        // A database as the previous release left it: migrated through v3, with pushes stored.
        let database = try TestPostgres.freshDatabase()
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = database
        let migrate = try Shell.run(
            BuiltExecutables.folder.appendingPathComponent("onboarding-server").path,
            ["migrate", "--through", "v3-catalogs"],
            environment: environment)
        #expect(migrate.status == 0, "\(migrate.stderr)")
        let population = Population(app: "growth", count: 40, seed: 3)
        var statements: [String] = []
        for account in population.accounts {
            for device in account.devices {
                for item in population.items(account, device: device) {
                    statements.append(
                        """
                        INSERT INTO pushes (app, account, device, seq, time, event, catalog_version) \
                        VALUES ('growth', '\(account.id)', '\(device)', \(item.seq), \(item.time), \
                        'next', \(item.catalogVersion))
                        """
                    )
                    for (index, fact) in item.facts.enumerated() {
                        let object = fact.objectValue ?? [:]
                        let step = object["step"]?.stringValue.map { "'\($0)'" } ?? "NULL"
                        let ending = object["ending"]?.stringValue.map { "'\($0)'" } ?? "NULL"
                        statements.append(
                            """
                            INSERT INTO facts (app, account, device, seq, idx, kind, flow, step, \
                            step_index, ending, body) VALUES ('growth', '\(account.id)', \
                            '\(device)', \(item.seq), \(index), '\(object["fact"]?.stringValue ?? "")', \
                            'welcome', \(step), \(object["index"]?.intValue ?? 0), \(ending), \
                            '\(try fact.jsonText())')
                            """
                        )
                    }
                }
            }
        }
        let inserted = try Shell.run(
            TestPostgres.psql, [database, "-qc", statements.joined(separator: ";\n")])
        #expect(inserted.status == 0, "\(inserted.stderr)")
        // The new release migrates (v4 counts what is stored) and reports it; a push adds to it once.
        let server = try ServerProcess(databaseURL: database)
        let admin = try server.operatorCredential()
        let report = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: admin
        ).json
        let welcome = try #require(
            (report["flows"] as? [[String: Any]])?.first { $0["flow"] as? String == "welcome" })
        #expect(report["accounts"] as? Int == population.accounts.count)
        #expect(welcome["started"] as? Int == population.expectedStages[0].1)
        #expect(
            (welcome["steps"] as? [[String: Any]])?.map { $0["accounts"] as? Int ?? -1 }
                == population.expectedStages.dropFirst().dropLast().map(\.1))
        try await population.push(to: server)
        let again = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: admin
        ).json
        #expect(again["accounts"] as? Int == population.accounts.count)
        let welcomeAgain = try #require(
            (again["flows"] as? [[String: Any]])?.first { $0["flow"] as? String == "welcome" })
        #expect(welcomeAgain["started"] as? Int == population.expectedStages[0].1)
    }
}
