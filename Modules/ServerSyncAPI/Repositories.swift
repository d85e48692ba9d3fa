import AccountSync
import ServerControlPlane
import ServerInsights
import ServerPublishing
import TourCodec
import TourCore

// What the sync API's routes (`SyncRoutes`) ask of storage, and nothing more: the routes are given
// these, so what a device's request may do to the database is read here, in a page, and a route
// cannot reach a store's other statements. `AccountStore`, `EnrollmentStore` and `FlowArchive`
// keep them on PostgreSQL.

/// A device's account: its pushes and records, the family's display budget, sign-out everywhere,
/// and a subject's export and erasure.
package protocol AccountRepository: Sendable {
    /// Whether a push arriving now would be taken: checked before its body is read, so a shed push
    /// costs the server little.
    func admitsPush() -> Bool
    /// Stores `batch` (nil: its token was issued before the account's sign-out everywhere).
    func push(
        app: String, account: String, _ batch: PushBatch, tokenIssuedAt: Double?, subjectNames: [String],
        arrived: ContinuousClock.Instant
    ) async throws -> PushAck?
    func records(app: String, account: String) async throws -> AccountRecords
    /// Whether `app` is of the family that shares the display budget.
    func sharesBudget(app: String) async throws -> Bool
    func exchangeBudget(account: String, _ exchange: BudgetExchange, today: BudgetDay?) async throws
        -> AccountBudget
    /// The cut-off: the account's tokens issued before it are refused from now on.
    func signOutEverywhere(
        app: String, account: String, named name: String, at time: Double, audit: AuditLog.Entry?
    ) async throws -> Double
    func erase(app: String, subject: String, pseudonym: String, by actor: Actor, at time: Double) async throws
        -> ErasureSummary
    func export(app: String, subject: String) async throws -> TourValue
    /// Whether a write commits (readiness, where the server runs no commit probe).
    func isReady() async -> Bool
}

/// An app's figures, on the primary or a replica.
package protocol ReportRepository: Sendable {
    /// What a report waits to see counted before it reads: one past the newest push's transaction.
    func reportTarget() async throws -> UInt64
    func report(app: String) async throws -> AppReport
    /// Each experiment's arms, by the publications in `history`.
    func experimentReports(app: String, history: any PublicationHistory) async throws -> ExperimentReports
    /// Facts the app's tracking plan does not declare, set apart and not counted.
    func unplanned(app: String) async throws -> [AppReport.Unplanned]
}

/// Installs taking an app's enrollment key.
package protocol EnrollmentRepository: Sendable {
    /// A new install's id, or nil when `key` is not one of the app's live keys.
    func enroll(app: String, key: String, at time: Double) async throws -> String?
}

/// Flows set aside from the dashboard and its reports.
package protocol FlowArchiveRepository: Sendable {
    /// Whether anything changed (archiving an archived flow changes nothing, and is not audited).
    func set(app: String, flow: String, archived: Bool, by actor: Actor, at time: Double) async throws -> Bool
    /// The archived flows of `apps`, each as `app/flow`.
    func archived(apps: [String]) async throws -> Set<String>
}

extension AccountStore: AccountRepository, ReportRepository {}
extension EnrollmentStore: EnrollmentRepository {}
extension FlowArchive: FlowArchiveRepository {}
