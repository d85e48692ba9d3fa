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

    func apply(_ effect: FixtureEffect, to domain: inout [String: TourValue], now: Date) {
        if effect.name == "activate" { domain["bank"] = effect.payload["bank"] }
    }
}

/// Product domain state gets the care flow state gets: declared keys and kinds, a stored format,
/// newer formats refused by name.
@Suite("Domain state vocabulary")
struct DomainStateTests {
    static func session(_ declared: DomainStateVocabulary, _ database: OnboardingDatabase) -> TourSession {
        TourSession(
            product: Product(catalog: Fixtures.catalog(), handler: DeclaringHandler(domainState: declared), currentVersion: "2.5"),
            user: "ann", database: database, permissions: StubPermissionProvider(statuses: [.screenTime: .granted]),
            time: .virtual(start: Fixtures.t0))
    }

    /// Walks the fixture onboarding up to its last step; `go` completes it and sends `activate`.
    static func walkToTheLastStep(_ session: TourSession) async throws {
        try await session.send(.appLaunched(version: "2.5"))
        for (action, parameters) in [("next", [:]), ("choose", ["apps": "A"]), ("next", [:]), ("next", [:]), ("next", [:])] {
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
        let stored = try database.session(SessionKey(app: "test", user: "ann"), scopes: Fixtures.catalog().scopes)
        #expect(stored.domainFormat == 2)
        #expect(Self.declared.problems(in: ["bank": .null]).isEmpty, "null fits every kind")
    }

    @Test(arguments: [
        (DomainStateVocabulary(format: 1, [.init("balance", .number, "another key")]), "domain state key 'bank' is not declared (declared: balance)"),
        (DomainStateVocabulary(format: 1, [.init("bank", .text, "a name")]), "domain state key 'bank' holds a number, declared as text"),
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
        let error = await #expect(throws: EffectError.self) { try await session.send(.actionPerformed("go", parameters: [:])) }
        #expect(error?.description == message)
        #expect(try await session.snapshot() == before)
        #expect(try database.journal(app: "test").count == journal)
    }

    @Test func stateANewerReleaseWroteIsRefusedByNameAndLeftUnchanged() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("domain-\(UUID().uuidString).sqlite").path
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
            "the domain state of test was written in format 3 by a newer release; this release reads format 2 and older. It was left unchanged: upgrade, or use another database."
        let reading = await #expect(throws: StorageError.self) { try await session.snapshot() }
        #expect(reading?.description == expected)
        let writing = await #expect(throws: StorageError.self) { try await session.send(.actionPerformed("next", parameters: [:])) }
        #expect(writing?.description == expected)
        let stored = try database.session(SessionKey(app: "test", user: "ann"), scopes: Fixtures.catalog().scopes)
        #expect(stored.domainFormat == 3)
        #expect(stored.domain["bank"] == 60)
    }
}
