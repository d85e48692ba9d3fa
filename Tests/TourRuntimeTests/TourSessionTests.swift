import Foundation
import Haptics
import Permissions
import Persistence
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures
import TourRuntime

private struct Handler: ProductHandler {
    var domainState: DomainStateVocabulary {
        DomainStateVocabulary(format: 1, [.init("bank", .any, "activate's bank")])
    }

    func apply(_ effect: FixtureEffect, to domain: inout [String: TourValue], now: Date) {
        if effect.name == "activate" { domain["bank"] = effect.payload["bank"] }
    }
}

private func product() -> Product {
    Product(catalog: Fixtures.catalog(), handler: Handler(), currentVersion: "2.5")
}

@Suite("Runtime")
struct TourSessionTests {
    @Test func permissionAnswersComeBackAsEventsAndAreRemembered() async throws {
        let database = try OnboardingDatabase.inMemory()
        let permissions = StubPermissionProvider(
            statuses: [.health: .granted], answers: [.screenTime: .denied])
        let haptics = RecordingHaptics()
        let session = TourSession(
            product: product(), user: "ann", database: database, haptics: haptics,
            permissions: permissions, time: .virtual(start: Fixtures.t0))
        try await session.send(.appLaunched(version: "2.5"))
        try await session.send(.actionPerformed("next", parameters: [:]))
        try await session.send(.actionPerformed("choose", parameters: ["apps": "A"]))
        try await session.send(.actionPerformed("next", parameters: [:]))
        let entering = try await session.send(.actionPerformed("next", parameters: [:]))
        // Health was already granted: its check answered at once; Screen Time is not determined.
        #expect(entering.count == 2)
        #expect(try await session.snapshot().card?.notices == ["Health granted"])
        let asked = try await session.send(.actionPerformed("grantScreenTime", parameters: [:]))
        #expect(
            asked.map(\.record.event) == [
                .actionPerformed("grantScreenTime", parameters: [:]), .gateAnswered("screenTime", .denied),
            ])
        #expect(permissions.requests == [.screenTime])
        let stored = try database.session(SessionKey(app: "test", user: "ann"), scopes: product().scopes)
        #expect(stored.device["permission.screenTime"] == "denied")
        await #expect(throws: TourRefusal.self) {
            try await session.send(.actionPerformed("next", parameters: [:]))
        }
    }

    /// A session's work, its commits included, runs on its database file's own queue, never on
    /// Swift's cooperative pool (where a commit waiting out SQLite's busy timeout would stall the
    /// process's tasks): what it does while performing an event's effects runs there.
    @Test func aSessionRunsOnItsDatabasesQueueNotTheSharedPool() async throws {
        let file = Scratch.folder.appendingPathComponent("runtime-queue-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        }
        let database = try OnboardingDatabase.open(path: file)
        let places = Locked<[Bool]>([])
        let session = TourSession(
            product: product(), user: "ann", database: database, time: .virtual(start: Fixtures.t0),
            observe: { _ in places.withLock { $0.append(database.executor.isCurrent) } })
        try await session.send(.appLaunched(version: "2.5"))
        try await session.send(.actionPerformed("next", parameters: [:]))
        #expect(
            !places.withLock { $0 }.isEmpty && places.withLock { $0 }.allSatisfy { $0 },
            "\(places.withLock { $0 })")
        #expect(!database.executor.isCurrent, "the test itself is not on the database's queue")
    }

    /// A caller that sends a burst can run on the session's executor: its own code then runs on
    /// the database's queue too (so each `send` wakes no thread), and the events commit as from
    /// anywhere else.
    @Test func aCallerOnTheSessionsExecutorSendsFromTheDatabasesQueue() async throws {
        let file = Scratch.folder.appendingPathComponent("runtime-burst-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        }
        let database = try OnboardingDatabase.open(path: file)
        let session = TourSession(
            product: product(), user: "ann", database: database, time: .virtual(start: Fixtures.t0))
        let (committed, callerPlaces) = try await withTaskExecutorPreference(session.executor) {
            var places: [Bool] = [database.executor.isCurrent]
            var committed = try await session.send(.appLaunched(version: "2.5")).count
            places.append(database.executor.isCurrent)
            committed += try await session.send(.actionPerformed("next", parameters: [:])).count
            places.append(database.executor.isCurrent)
            return (committed, places)
        }
        #expect(callerPlaces == [true, true, true])
        #expect(committed >= 2)
        #expect(try database.journal(app: product().catalog.app).count == committed)
        #expect(!database.executor.isCurrent)
    }

    /// The budget file fails after an event committed (another process holds it past the busy
    /// timeout): the event stands, its flow starts, the caller sees success and one warning, and the
    /// next session copies the start from the journal.
    @Test(.offThePool) func aFailureAfterTheCommitFailsNothing() async throws {
        let folder = Scratch.folder.appendingPathComponent("after-commit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("family.sqlite").path
        let limits = DisplayBudget(flowsPerDay: 50, coolDown: 0)
        let session = TourSession(
            product: product(), user: "ann",
            database: try .open(path: folder.appendingPathComponent("app.sqlite").path),
            time: .virtual(start: Fixtures.t0),
            budget: try FamilyBudget(path: file, limits: limits, busyTimeout: 0.2))
        try await session.send(.signal("revealed"))
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        holder.arguments = [file]
        let input = try ChildProcess.spawning {
            let input = Pipe()
            holder.standardInput = input
            holder.standardOutput = FileHandle.nullDevice
            try holder.run()
            return input
        }
        // It says when it holds the lock (a file appears), and holds it until the test removes
        // another file: no stopwatch, so a loaded machine cannot let the lock go too early.
        let held = folder.appendingPathComponent("held").path
        let hold = folder.appendingPathComponent("hold").path
        _ = FileManager.default.createFile(atPath: hold, contents: nil)
        input.fileHandleForWriting.send(
            """
            BEGIN IMMEDIATE;\n.shell touch \(held)\n.shell while [ -e \(hold) ]; do sleep 0.05; \
            done\nCOMMIT;\n
            """
        )
        try? input.fileHandleForWriting.close()
        while !FileManager.default.fileExists(atPath: held) { try await Task.sleep(for: .milliseconds(20)) }
        // The walkthrough's start comes due: committed, counted in the journal, not in the file.
        let due = try await session.advanceClock(by: 1.5)
        #expect(due.contains { $0.record.facts.contains(.budgetSpent(flow: "walk")) })
        #expect(try await session.snapshot().card?.flow == "walk")
        let warnings = await session.drainWarnings()
        #expect(warnings.count == 1 && warnings[0].contains("it is in the journal"), "\(warnings)")
        #expect(await session.drainWarnings().isEmpty, "said once")
        try FileManager.default.removeItem(atPath: hold)
        holder.waitUntilExit()
        // The next event (here, the next session's) copies it.
        let next = TourSession(
            product: product(), user: "ann",
            database: try .open(path: folder.appendingPathComponent("app.sqlite").path),
            time: .virtual(start: Fixtures.t0), budget: try FamilyBudget(path: file, limits: limits))
        try await next.send(.clockAdvanced)
        let count = Process()
        count.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        count.arguments = [file, "SELECT count(*) FROM budget_start WHERE flow = 'walk';"]
        let output = try ChildProcess.spawning {
            let output = Pipe()
            count.standardOutput = output
            try count.run()
            return output
        }
        count.waitUntilExit()
        #expect(String(decoding: output.fileHandleForReading.readUntilEnd(), as: UTF8.self) == "1\n")
    }

    @Test func theVirtualClockHoldsAcrossSessionsAndFiresWhatIsDue() async throws {
        let folder = Scratch.folder.appendingPathComponent(
            "runtime-\(UUID().uuidString).sqlite"
        ).path
        defer {
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: folder + suffix)
            }
        }
        do {
            let session = TourSession(
                product: product(), user: "ann", database: try .open(path: folder),
                time: .virtual(start: Fixtures.t0))
            try await session.send(.signal("revealed"))
            try await session.advanceClock(by: 1.0)
            #expect(try await session.snapshot().card?.flow != "walk")
        }
        let later = TourSession(
            product: product(), user: "ann", database: try .open(path: folder),
            time: .virtual(start: Fixtures.t0))
        #expect(try await later.snapshot().now == Fixtures.t0.timeIntervalSince1970 + 1.0)
        try await later.advanceClock(by: 0.5)
        #expect(try await later.snapshot().card?.step == "intro")
    }

    @Test func aUICanFollowStateChanges() async throws {
        let session = TourSession(
            product: product(), user: "ann", database: try .inMemory(),
            time: .virtual(start: Fixtures.t0))
        let updates = await session.updates()
        try await session.send(.appLaunched(version: "2.5"))
        try await session.send(.actionPerformed("next", parameters: [:]))
        var iterator = updates.makeAsyncIterator()
        #expect(await iterator.next()?.card?.step == "welcome")
        #expect(await iterator.next()?.card?.step == "pick")
    }

    @Test func productSideEffectsWriteDomainState() async throws {
        let database = try OnboardingDatabase.inMemory()
        let haptics = RecordingHaptics()
        let session = TourSession(
            product: product(), user: "ann", database: database, haptics: haptics,
            permissions: StubPermissionProvider(statuses: [.screenTime: .granted]),
            time: .virtual(start: Fixtures.t0))
        try await session.send(.appLaunched(version: "2.5"))
        for (action, parameters) in [
            ("next", [:]), ("choose", ["apps": "A"]), ("next", [:]), ("next", [:]), ("next", [:]),
            ("go", [:]),
        ] {
            try await session.send(.actionPerformed(action, parameters: parameters))
        }
        #expect(try await session.snapshot().state["bank"] == 60)
    }

    @Test func hapticsArePlayedThroughTheProtocol() async throws {
        let haptics = RecordingHaptics()
        let session = TourSession(
            product: product(), user: "ann", database: try .inMemory(), haptics: haptics,
            time: .virtual(start: Fixtures.t0))
        try await session.send(.signal("revealed"))
        try await session.advanceClock(by: 1.5)
        #expect(haptics.played.isEmpty == false)
        let lines = LinesBox()
        TerminalHaptics { lines.append($0) }.play(.impactLight)
        #expect(lines.lines == ["haptic: impact(.light)"])
    }
}

final class LinesBox: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ line: String) { lock.withLock { storage.append(line) } }
    var lines: [String] { lock.withLock { storage } }
}
