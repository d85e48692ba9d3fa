import Foundation
import Testing
import TourCodec
import TourFixtures
import TourRuntime
import Persistence
import Permissions
import Haptics

private struct Handler: ProductHandler {
    var domainState: DomainStateVocabulary { DomainStateVocabulary(format: 1, [.init("bank", .any, "activate's bank")]) }

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

    @Test func theVirtualClockHoldsAcrossSessionsAndFiresWhatIsDue() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
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
