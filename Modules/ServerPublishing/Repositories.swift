import ServerControlPlane
import TourCore

// What the publishing routes (`CatalogRoutes`), the studio's pages and the figures that follow
// publications ask of storage, and nothing more: the routes are given these, so what a publishing
// request may do to the database is read here. `CatalogStore`, `CatalogDrafts` and
// `GuardedRollouts` keep them on PostgreSQL.

/// An app's publications: the devices' pull, publishing and withdrawing.
package protocol CatalogRepository: PublicationHistory {
    /// The publications devices may take: published, not withdrawn, rolled out to someone.
    func live(app: String) async throws -> [CatalogStore.Entry]
    /// Checks and records `text` as the app's next version (``CatalogStore/Outcome``).
    func publish(
        app: String, text: String, rollout: Int, signatures: [CatalogSignature],
        guarded: GuardedRollout.Plan?,
        by actor: Actor, at time: Double
    ) async throws -> CatalogStore.Outcome
    /// The withdrawn entry, or nil when `version` is not a live publication.
    func withdraw(app: String, version: Int, by actor: Actor, at time: Double) async throws -> CatalogStore
        .Entry?
}

/// Every version an app recorded, oldest first: what an experiment's report reads its arms from.
package protocol PublicationHistory: Sendable {
    func all(app: String) async throws -> [CatalogStore.Entry]
}

/// Guarded rollouts: their records, the guard's looks, and a person's commands.
package protocol GuardedRolloutRepository: Sendable {
    func all(app: String) async throws -> [GuardedRollouts.Record]
    func looks(app: String, version: Int, limit: Int) async throws -> [GuardedRollouts.Look]
    func command(
        _ command: GuardedRollout.Command, app: String, version: Int, by actor: Actor, at time: Double
    )
        async throws -> GuardedRollouts.CommandOutcome
}

/// The studio's drafts of an app's catalog: each save a revision, read back, renamed or deleted.
package protocol DraftRepository: Sendable {
    /// Each draft's newest revision (their documents left out), newest draft first.
    func list(app: String) async throws -> [CatalogDrafts.Revision]
    func latest(app: String, draft: Int) async throws -> CatalogDrafts.Revision?
    /// A draft's revisions (their documents left out), newest first.
    func history(app: String, draft: Int) async throws -> [CatalogDrafts.Revision]
    func revision(app: String, draft: Int, revision: Int) async throws -> CatalogDrafts.Revision?
    func names(app: String) async throws -> [Int: String]
    /// Whether the draft exists (and so was renamed).
    func rename(app: String, draft: Int, to name: String, by actor: Actor, at time: Double) async throws
        -> Bool
    func create(app: String, document: String, version: Int, basedOn: Int, by actor: Actor, at time: Double)
        async throws -> CatalogDrafts.Revision?
    /// A new revision, when `after` is the draft's newest (``CatalogDrafts/Saved``).
    func save(
        app: String, draft: Int, after: Int, document: String, note: String, by actor: Actor, at time: Double
    ) async throws -> CatalogDrafts.Saved
    func delete(app: String, draft: Int, after: Int, by actor: Actor, at time: Double) async throws
        -> CatalogDrafts.Deleted
}

extension CatalogStore: CatalogRepository {}
extension CatalogDrafts: DraftRepository {}
extension GuardedRollouts: GuardedRolloutRepository {}
