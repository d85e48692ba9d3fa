import CSQLite
import Foundation
import Haptics
import Permissions
import Persistence
import Testing
import TourCodec
import TourCore
import TourFixtures
import TourRuntime

/// A handler whose declaration of its domain state a test chooses; `activate` writes `bank` (60).
private struct DeclaringHandler: ProductHandler {
    var domainState: DomainStateVocabulary
    /// Format 1 kept the bank in hours under `bankHours`; format 2 keeps minutes under `bank`.
    var upgradesHours = false

    func apply(_ effect: FixtureEffect, to domain: inout [String: TourValue], now: Date) {
        if effect.name == "activate" { domain["bank"] = effect.payload["bank"] }
    }

    func upgradeDomainState(_ domain: [String: TourValue], from format: Int) -> [String: TourValue] {
        guard upgradesHours, format == 1, let hours = domain["bankHours"]?.intValue else { return domain }
        var domain = domain
        domain["bankHours"] = nil
        domain["bank"] = .int(hours * 60)
        return domain
    }
}

/// Product domain state gets the care flow state gets: declared keys and kinds, a stored format,
/// newer formats refused by name.
@Suite("Domain state vocabulary")
struct DomainStateTests {
    static func session(
        _ declared: DomainStateVocabulary, _ database: OnboardingDatabase, upgradesHours: Bool = false
    ) -> TourSession {
        TourSession(
            product: Product(
                catalog: Fixtures.catalog(),
                handler: DeclaringHandler(domainState: declared, upgradesHours: upgradesHours),
                currentVersion: "2.5"),
            user: "ann", database: database,
            permissions: StubPermissionProvider(statuses: [.screenTime: .granted]),
            time: .virtual(start: Fixtures.t0))
    }

    /// Walks the fixture onboarding up to its last step; `go` completes it and sends `activate`.
    static func walkToTheLastStep(_ session: TourSession) async throws {
        try await session.send(.appLaunched(version: "2.5"))
        for (action, parameters) in [
            ("next", [:]), ("choose", ["apps": "A"]), ("next", [:]), ("next", [:]), ("next", [:]),
        ] {
            try await session.send(.actionPerformed(action, parameters: parameters))
        }
    }

    static let declared = DomainStateVocabulary(format: 2, [.init("bank", .number, "the starting bank")])

    @Test func aDeclaredWriteIsStoredWithItsFormat() async throws {
        let database = try OnboardingDatabase.inMemory()
        let session = Self.session(Self.declared, database)
        try await Self.walkToTheLastStep(session)
        try await session.send(.actionPerformed("go", parameters: [:]))
        #expect(try await session.snapshot().state["bank"] == 60)
        let stored = try database.session(
            SessionKey(app: "test", user: "ann"), scopes: Fixtures.catalog().scopes)
        #expect(stored.domainFormat == 2)
        #expect(Self.declared.problems(in: ["bank": .null]).isEmpty, "null fits every kind")
    }

    @Test(arguments: [
        (
            DomainStateVocabulary(format: 1, [.init("balance", .number, "another key")]),
            "domain state key 'bank' is not declared (declared: balance)"
        ),
        (
            DomainStateVocabulary(format: 1, [.init("bank", .text, "a name")]),
            "domain state key 'bank' holds a number, declared as text"
        ),
        (DomainStateVocabulary.none, "domain state key 'bank' is not declared (declared: none)"),
    ])
    func anUndeclaredKeyOrAValueOfAnotherKindRefusesTheEventAndWritesNothing(
        _ declared: DomainStateVocabulary, _ message: String
    ) async throws {
        let database = try OnboardingDatabase.inMemory()
        let session = Self.session(declared, database)
        try await Self.walkToTheLastStep(session)
        let before = try await session.snapshot()
        let journal = try database.journal(app: "test").count
        let error = await #expect(throws: EffectError.self) {
            try await session.send(.actionPerformed("go", parameters: [:]))
        }
        #expect(error?.description == message)
        #expect(try await session.snapshot() == before)
        #expect(try database.journal(app: "test").count == journal)
    }

    @Test func stateANewerReleaseWroteIsRefusedByNameAndLeftUnchanged() async throws {
        let path = Scratch.folder.appendingPathComponent("domain-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let database = try OnboardingDatabase.open(path: path)
            let session = Self.session(Self.declared, database)
            try await Self.walkToTheLastStep(session)
            try await session.send(.actionPerformed("go", parameters: [:]))
        }
        // A newer release wrote format 3.
        var handle: OpaquePointer?
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        #expect(sqlite3_exec(handle, "UPDATE domain_format SET format = 3", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)

        let database = try OnboardingDatabase.open(path: path)
        let session = Self.session(Self.declared, database)
        let expected =
            """
            the domain state of test was written in format 3 by a newer release; this release reads \
            format 2 and older. It was left unchanged: upgrade, or use another database.
            """
        let reading = await #expect(throws: StorageError.self) { try await session.snapshot() }
        #expect(reading?.description == expected)
        let writing = await #expect(throws: StorageError.self) {
            try await session.send(.actionPerformed("next", parameters: [:]))
        }
        #expect(writing?.description == expected)
        let stored = try database.session(
            SessionKey(app: "test", user: "ann"), scopes: Fixtures.catalog().scopes)
        #expect(stored.domainFormat == 3)
        #expect(stored.domain["bank"] == 60)
    }

    /// A key an earlier release wrote and this one no longer declares (Growth's `profileTourStatus`
    /// of 0.5) stays where it is and does not stop events that write other keys.
    @Test func aRetiredKeyInTheFileDoesNotRefuseWritesOfOtherKeys() async throws {
        let database = try OnboardingDatabase.inMemory()
        let key = SessionKey(app: "test", user: "ann")
        try database.commit(key, scopes: Fixtures.catalog().scopes) { session in
            session.domain["retired"] = "from an old release"
            return ((), nil)
        }
        let session = Self.session(Self.declared, database)
        try await Self.walkToTheLastStep(session)
        try await session.send(.actionPerformed("go", parameters: [:]))
        let stored = try database.session(key, scopes: Fixtures.catalog().scopes)
        #expect(stored.domain == ["retired": "from an old release", "bank": 60])
    }

    @Test func stateOfAnOlderFormatIsUpgradedWhenReadAndStoredUpgradedByTheNextWrite() async throws {
        let database = try OnboardingDatabase.inMemory()
        let key = SessionKey(app: "test", user: "ann")
        try database.commit(key, scopes: Fixtures.catalog().scopes) { session in
            session.domain["bankHours"] = 2
            session.domainFormat = 1
            return ((), nil)
        }
        let declared = DomainStateVocabulary(format: 2, [.init("bank", .number, "the bank in minutes")])
        let session = Self.session(declared, database, upgradesHours: true)
        #expect(try await session.snapshot().state == ["bank": 120])
        // Nothing is written by a read.
        #expect(try database.session(key, scopes: Fixtures.catalog().scopes).domain == ["bankHours": 2])
        try await session.send(.appLaunched(version: "2.5"))
        let stored = try database.session(key, scopes: Fixtures.catalog().scopes)
        #expect(stored.domain == ["bank": 120])
        #expect(stored.domainFormat == 2)
    }
}
