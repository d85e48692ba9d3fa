import AccountSync
import CatalogDocuments
import Foundation
import TestThreads
import Testing
import TourCodec
import TourFixtures

/// A catalog committed and a push of its new flow's facts right after it, while the server holds the
/// app's plan from a push a moment before: two hundred times, not one fact set apart. The catalog
/// is written straight into the database, as another server process publishing it would.
@Suite("A tracking plan that never loses a race", .ownThread)
struct TrackingPlanRaceTests {
    /// The trial app's catalog with one flow named `flow`, at `version`.
    static func document(flow: String, version: Int) throws -> String {
        var catalog = ExperimentFixture.catalog(version: version, experiment: nil)
        catalog.flows[0].id = FlowID(rawValue: flow)
        return try CatalogDocument(catalog, declarations: ExperimentFixture.declarations).text()
    }

    @Test func factsOfACatalogCommittedAMomentAgoAreNeverSetApart() async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_SERVER_SECRET": ServerProcess.secret])
        let first = Scratch.folder.appendingPathComponent("trial-\(UUID().uuidString).json")
        try Self.document(flow: "tour", version: 1).write(to: first, atomically: true, encoding: .utf8)
        let registered = try PublishingTests().serverCommand(
            server, ["register", "--app", ExperimentFixture.app, first.path])
        try #require(registered.status == 0, "\(registered.stderr)")
        let warm = try server.token(account: "warm", app: ExperimentFixture.app)
        let racer = try server.token(account: "racer", app: ExperimentFixture.app)
        func push(_ account: String, _ token: String, seq: Int, _ facts: [TourValue]) async throws {
            let item = PushItem(
                seq: Int64(seq), time: 1_764_000_000 + Double(seq), event: "next", catalogVersion: 1,
                facts: facts, records: [:])
            let answer = try await HTTP.post(
                server.url.appendingPathComponent("v1/apps/trial/accounts/\(account)/push"), token: token,
                body: Data(try PushBatch(device: "d-\(account)", items: [item]).tourValue.jsonUTF8()))
            try #require(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        }
        let tries = 200
        for index in 1...tries {
            // The plan held a moment ago: a push of a flow it declares.
            try await push("warm", warm, seq: index, [TrackingPlanTests.entered("tour", "welcome")])
            // Another process commits a catalog with a new flow; a device pushes its facts at once.
            let text = try Self.document(flow: "race\(index)", version: index + 1)
            _ = try server.sql(
                """
                INSERT INTO catalogs (app, version, source, fingerprint, document, recorded_at, recorded_by)
                VALUES ('trial', \(index + 1), 'published', 'race', $doc$\(text)$doc$, extract(epoch FROM \
                clock_timestamp()), 'test')
                """)
            try await push("racer", racer, seq: index, [TrackingPlanTests.entered("race\(index)", "welcome")])
        }
        #expect(
            try server.sql("SELECT count(*) FROM facts WHERE app = 'trial' AND flow LIKE 'race%'") == [
                "\(tries)"
            ])
        let apart = try server.sql(
            "SELECT flow || ' ' || facts FROM unplanned_facts WHERE app = 'trial' ORDER BY flow")
        #expect(apart.isEmpty, "set apart: \(apart.prefix(10))")
    }
}
