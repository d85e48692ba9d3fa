import SchemaMigrations
import Testing

@testable import Persistence

/// The schema shape the device and the server share: what a database still needs, in order, and
/// what a newer build applied.
@Suite("Schema history")
struct SchemaHistoryTests {
    static let history = SchemaHistory([
        SchemaMigration("v1", ["CREATE TABLE a (x)"]),
        SchemaMigration("v2", ["CREATE TABLE b (x)", "CREATE INDEX b_x ON b (x)"]),
        SchemaMigration("v3", ["DROP TABLE a"]),
    ])

    @Test func aDatabaseNeedsWhatItHasNotRecordedInOrderUpToTheOneNamed() {
        #expect(Self.history.pending(applied: []).map(\.id) == ["v1", "v2", "v3"])
        #expect(Self.history.pending(applied: ["v1", "v3"]).map(\.id) == ["v2"])
        #expect(Self.history.pending(applied: ["v3", "v2", "v1"]).isEmpty)
        #expect(Self.history.pending(applied: [], through: "v2").map(\.id) == ["v1", "v2"])
        #expect(Self.history.pending(applied: ["v1"], through: "v1").isEmpty)
        #expect(Self.history.pending(applied: [], through: "v2").last?.statements.count == 2)
    }

    @Test func idsANewerBuildAppliedAreNamed() {
        #expect(Self.history.unknown(applied: ["v1", "v9-from-the-future", "v2"]) == ["v9-from-the-future"])
        #expect(Self.history.unknown(applied: Self.history.ids).isEmpty)
    }

    /// The device's migrations in the shared shape: the same ids in the same order, one script each.
    @Test func theDevicesMigrationsAreTheSharedShape() {
        #expect(Schema.history.ids == Schema.migrations.map(\.id))
        #expect(Schema.history.migrations.allSatisfy { $0.statements.count == 1 })
        #expect(Schema.history.ids == DatabaseTests.migrations)
    }
}
