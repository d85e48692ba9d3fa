import Foundation
import LockedInOnboarding
import TourRuntime

// Benchmarks for the engine, the commit path and the journal rebuild. Not a test: it measures.
// Run: scripts/bench.sh   (a release build; figures in Docs/Performance.md)

func measure(_ name: String, operations: Int, _ body: () async throws -> Void) async rethrows {
    let clock = ContinuousClock()
    let elapsed = try await clock.measure { try await body() }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let perOperation = seconds / Double(operations) * 1e6
    let label = name.padding(toLength: 46, withPad: " ", startingAt: 0)
    print(
        label
            + String(
                format: "%8d ops %10.1f ms total %9.2f µs/op %9.0f ops/s",
                operations, seconds * 1000, perOperation, Double(operations) / seconds))
}

/// One full LockedIn onboarding: 12 accepted events including permission answers.
let onboarding: [TourEvent] = [
    .appLaunched(version: "1.0"), .actionPerformed("next", parameters: [:]),
    .actionPerformed("chooseApps", parameters: ["apps": "Instagram,TikTok,YouTube,Reddit"]),
    .actionPerformed("next", parameters: [:]),
    .actionPerformed("selectDifficulty", parameters: ["difficulty": "hard"]),
    .actionPerformed("next", parameters: [:]), .actionPerformed("grantScreenTime", parameters: [:]),
    .gateAnswered("screenTime", .granted), .actionPerformed("grantHealth", parameters: [:]),
    .gateAnswered("health", .granted), .actionPerformed("next", parameters: [:]),
    .actionPerformed("letsGo", parameters: [:]),
]

let engine = LockedInCatalog.product.engine
let start = Date(timeIntervalSince1970: 1_767_603_600)
let rounds = 20_000

try await measure("engine.reduce, LockedIn onboarding events", operations: rounds * onboarding.count) {
    for round in 0..<rounds {
        var state = TourState()
        for event in onboarding {
            state = try engine.reduce(state, event, at: start.addingTimeInterval(Double(round))).state
        }
    }
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
    "onboarding-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

for (label, database) in [
    ("in memory", try OnboardingDatabase.inMemory()),
    ("file (WAL)", try OnboardingDatabase.open(path: folder.appendingPathComponent("bench.sqlite").path)),
] {
    let users = 200
    // Each run: a reset, 10 user events and the 2 permission answers they bring back.
    try await measure("committed events, \(label)", operations: users * (onboarding.count + 1)) {
        for user in 0..<users {
            let session = TourSession(
                product: LockedInCatalog.product, user: "u\(user)", database: database,
                time: .virtual(start: start))
            // LockedIn's onboarding is install-scoped: reset it so each run goes through it again.
            try await session.send(.resetRequested(nil))
            for event in onboarding where !(event.name.hasPrefix("gateAnswered")) {
                try await session.send(event)
            }
        }
    }
    let rows = try database.journal(app: "lockedin").count
    try await measure("journal rebuild (\(rows) rows), \(label)", operations: rows) {
        _ = try JournalReplay.rebuild(app: "lockedin", engine: engine, from: database)
    }
}
