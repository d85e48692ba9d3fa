import Foundation
import LockedInOnboarding
import Persistence
import TourCore

/// Compares a product's stored flow states with what its journal rebuilds.
enum JournalCheck {
    static func rebuildMatchesStoredState(database path: String) throws -> (
        matches: Bool, rows: Int, detail: String
    ) {
        let database = try OnboardingDatabase.open(path: path)
        let engine = TourEngine(catalog: LockedInCatalog.catalog)
        let rebuilt = try JournalReplay.rebuild(app: LockedInCatalog.app, engine: engine, from: database)
        let stored = try database.storedFlows(app: LockedInCatalog.app)
        let rows = try database.journal(app: LockedInCatalog.app).count
        return (rebuilt == stored, rows, "rebuilt \(rebuilt) stored \(stored)")
    }
}
