import Foundation
import LockedInOnboarding
import Persistence
import TourCore

/// Compares a product's stored flow states with what its journal gives: the states its rows
/// recorded (`rebuild`) and the events replayed through the engine (`replay`).
enum JournalCheck {
    static func rebuildMatchesStoredState(database path: String) throws -> (
        matches: Bool, rows: Int, detail: String
    ) {
        let database = try OnboardingDatabase.open(path: path)
        let engine = LockedInCatalog.product.engine
        let rebuilt = try JournalReplay.rebuild(app: LockedInCatalog.app, engine: engine, from: database)
        let replayed = try JournalReplay.replay(app: LockedInCatalog.app, engine: engine, from: database)
        let stored = try database.storedFlows(app: LockedInCatalog.app)
        let rows = try database.journal(app: LockedInCatalog.app).count
        return (
            rebuilt == stored && replayed == stored, rows,
            "rebuilt \(rebuilt) replayed \(replayed) stored \(stored)"
        )
    }
}
