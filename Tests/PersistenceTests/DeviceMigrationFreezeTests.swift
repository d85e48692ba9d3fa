import SchemaMigrations
import Testing

@testable import Persistence

/// The device's landed migrations are never edited, as the server's are not (`MigrationFreezeTests`):
/// a file migrated before and after a change to a landed migration would differ. Each is held to
/// the fingerprint it landed with (``SchemaMigration/fingerprint``); a new migration adds its line
/// here in the change that adds it, and the test fails until it does.
@Suite struct DeviceMigrationFreezeTests {
    static let landed: [(id: String, fingerprint: UInt64)] = [
        ("v1-flows-journal-domain", 0x73a9c1518950567d),
        ("v2-catalog-versions-journal-facts", 0xdae8459b8365c97b),
        ("v3-account-sync", 0x1708037ea414b802),
        ("v4-journal-recorded-states", 0x5bfe0217813c3daa),
        ("v5-journal-catalog-fingerprint", 0x51e2abe1318c0981),
        ("v6-domain-state-format", 0x570be8ccdb50d605),
        ("v7-published-catalogs", 0xea989d6b80d2a7f2),
        ("v8-catalog-pull-binary", 0x6a7d7debc1fc6cde),
        ("v9-experiments", 0x835f035377f5d444),
        ("v10-journal-app-version", 0x8b35b9f348606391),
        ("v11-signed-publications", 0xafbd04c6aa29f64c),
        ("v12-outbox-set-aside", 0x5b1c8ddc26dfc81a),
        ("v13-installs-secrets-freshness", 0x12c6844b3db5ffba),
        ("v14-journal-consent-and-start-context", 0xff7dd6c9648d56e1),
    ]

    /// The display budget file's (``SharedBudgetFile``), on the same runner.
    static let landedBudget: [(id: String, fingerprint: UInt64)] = [("v1-budget", 0xc7012c5b9d28f3bc)]

    @Test func everyLandedDeviceMigrationIsAsItLanded() {
        for problem in Schema.history.freezeProblems(landed: Self.landed) {
            Issue.record(Comment(rawValue: problem))
        }
        for problem in SharedBudgetFile.history.freezeProblems(landed: Self.landedBudget) {
            Issue.record(Comment(rawValue: problem))
        }
    }
}
