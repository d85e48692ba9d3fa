import OnboardingServer
import SchemaMigrations
import Testing

/// Landed migrations are never edited (Docs/Architecture.md): a database that applied one keeps what
/// it applied, so a changed text would leave databases migrated before and after the change
/// different. Each landed server migration's statements are held to the fingerprint they landed
/// with (``SchemaMigration/fingerprint``); a new migration adds its line here in the change that
/// adds it (the test fails until it does). The device's migrations are held the same way
/// (`DeviceMigrationFreezeTests`).
@Suite struct MigrationFreezeTests {
    static let landed: [(id: String, fingerprint: UInt64)] = [
        ("v1-pushes-facts-account-flows", 0xac357ef4dd42e782),
        ("v2-token-cutoffs", 0x33710918a81a51b8),
        ("v3-catalogs", 0xe4ea3f727f37734c),
        ("v4-insights", 0x44a18299e9153ad6),
        ("v5-dashboard-sessions", 0x7363ec3982a1be12),
        ("v6-standings-per-connection", 0x74ecd2b45ff1a965),
        ("v7-display-budget", 0x4f9000bad1acd588),
        ("v8-facts-by-key-only", 0x9fc372db38386496),
        ("v9-control-plane", 0xa239e396730bdec7),
        ("v10-watermark-per-database", 0xd93ccb4627a1b10),
        ("v11-enrollment-keys-installs", 0x8acec174839552f3),
        ("v12-unplanned-facts", 0x2d30f00a172f8439),
        ("v13-erasure-indexes", 0x7be022f8181086fe),
        ("v14-fact-retention", 0x6412339df23f99f7),
        ("v15-archived-flows", 0x8a07ce26521daae0),
        ("v16-journeys", 0x5d63d63d709ea950),
        ("v17-journey-ends", 0x82504054cf75954e),
        ("v18-catalog-drafts", 0xb9d7c0212e8a907),
        ("v19-partitioned-facts", 0x415487db8f26f97d),
        ("v20-idempotent-requests", 0xe6b505423e1d649e),
        ("v21-subject-fence", 0xfdeed310011ad458),
        ("v22-pseudonymous-cutoffs", 0xf72c1ecd08be5180),
        ("v23-readiness-probe", 0x4a2d963cd6d886c5),
        ("v24-guarded-rollouts", 0xa23d527ac637aa91),
        ("v25-draft-names", 0x1a8e7c232cb560),
        ("v26-held-facts", 0x161f93b17094e0fe),
        ("v27-count-by-push", 0x18af1ea78a3ab72d),
        ("v28-facts-reference-their-partition", 0x6c984cdc38221c22),
    ]

    @Test func everyLandedServerMigrationIsAsItLanded() {
        for problem in PostgresSchema.history.freezeProblems(landed: Self.landed) {
            Issue.record(Comment(rawValue: problem))
        }
    }
}
