import AccountSync
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import TestThreads
import Testing
import TourCodec
import TourFixtures

@testable import OnboardingServer
@testable import ServerControlPlane
@testable import ServerPublishing
@testable import ServerSyncAPI

/// A push whose app's plan this process holds is split without a read, and so without the bound
/// a read needs (`withDeadline`); the held path must answer what the reading path answers, and
/// must read exactly when the reading path would (a plan older than five seconds, or one older
/// than a second when a fact is outside it or the app has no plan yet).
@Suite("A tracking plan held in memory", .ownThread)
struct TrackingPlanHeldTests {
    static func request(_ facts: [TourValue]) -> PushRequest {
        let item = PushItem(
            seq: 1, time: 1_764_000_000, event: "next", catalogVersion: 1, facts: facts, records: [:])
        return PushRequest(app: "growth", account: "ann", batch: PushBatch(device: "d", items: [item]))
    }

    static func same(_ one: PushRequest?, _ other: PushRequest) -> Bool {
        one?.batch == other.batch && one?.unplanned == other.unplanned
    }

    @Test func theHeldPlanSplitsAsAReadOneAndReadsWhenItWould() async throws {
        try await TestPostgres.withMigratedClient { client, logger in
            let plans = TrackingPlans(reads: ReadOnlyDatabase(sharing: client, logger: logger))
            let planned = Self.request([TrackingPlanTests.entered("app_tour", "dashboard")])
            let mixed = Self.request([
                TrackingPlanTests.entered("app_tour", "dashboard"),
                TrackingPlanTests.entered("app_tour", "no_such_step", 2),
                TrackingPlanTests.entered("probe", "x"),
            ])

            // No plan yet, and none held: the held path reads (nil) until one was read. Times are
            // given from the moment of the read, so a slow machine does not age the plan.
            #expect(plans.splitWithoutReading(planned) == nil)
            let firstRead = ContinuousClock.now
            let none = try await plans.split(mixed, within: .seconds(60))
            #expect(none.unplanned.isEmpty)
            #expect(Self.same(plans.splitWithoutReading(mixed, now: firstRead), none))
            // "No plan yet" is looked at again every second.
            #expect(plans.splitWithoutReading(planned, now: firstRead + .milliseconds(1_100)) == nil)

            let compiled = try Shell.run(
                BuiltExecutables.folder.appendingPathComponent("growth").path, ["catalog", "--json"]
            ).stdout
            // Patient bounds: what this test checks is the plan held, not a write's bound, which the
            // suite's load can pass.
            let catalogs = CatalogStore(
                writes: WritableDatabase(client: client, logger: logger, bounds: .patient),
                reads: ReadOnlyDatabase(sharing: client, logger: logger), logger: logger)
            let outcome = try await catalogs.register(
                app: "growth", text: compiled, by: Actor(name: "test", source: "test", person: nil),
                at: 1_764_000_000)
            guard case .stored = outcome else {
                Issue.record("the catalog was not registered: \(outcome)"); return
            }
            // Held, the old answer stands within its second; a read finds the plan.
            #expect(Self.same(plans.splitWithoutReading(mixed, now: firstRead), none))
            let secondRead = ContinuousClock.now
            _ = try await plans.plan(app: "growth", maximumAge: .zero, within: .seconds(60))
            // Its undeclared facts make it read the plan again: held from then on.
            let read = try await plans.split(mixed, within: .seconds(60))
            let lastRead = ContinuousClock.now
            #expect(read.unplanned.map(\.step) == ["no_such_step", "x"])
            #expect(read.batch.items[0].facts.count == 1)
            #expect(
                Self.same(
                    plans.splitWithoutReading(planned, now: secondRead),
                    try await plans.split(planned, within: .seconds(60))))
            // A fact outside the plan makes it read again, however fresh the plan held; facts
            // inside it wait five seconds.
            #expect(plans.splitWithoutReading(mixed, now: secondRead) == nil)
            #expect(plans.splitWithoutReading(mixed, now: secondRead + .milliseconds(1_100)) == nil)
            #expect(
                Self.same(plans.splitWithoutReading(planned, now: secondRead + .milliseconds(1_100)), planned)
            )
            #expect(plans.splitWithoutReading(planned, now: lastRead + .milliseconds(5_100)) == nil)
        }
    }
}
