import AccountSync
import Dispatch
import Logging
import PostgresNIO
import ServerDatabase
import ServerPublishing
import ServerPushQueue
import ServiceLifecycle
import Synchronization
import TourCore

/// One device's push as the store receives it.
struct PushRequest: Sendable {
    var app: String
    var account: String
    var batch: PushBatch
    var tokenIssuedAt: Double?
    /// The account's pseudonyms its sign-out and erasure cut-offs are kept under.
    var subjectNames: [String] = []
    /// Facts the app's tracking plan does not declare, taken out of the batch (``TrackingPlans``).
    var unplanned: [UnplannedFact] = []
    /// For each row some of whose facts were set apart, the positions of the facts it kept.
    var keptFactIndexes: [Int64: [Int64]] = [:]

    /// The records of the batch folded per flow (the join is associative), one per flow.
    var records: [String: AccountFlowRecord] {
        var records: [String: AccountFlowRecord] = [:]
        for item in batch.items {
            for (flow, record) in item.records {
                records[flow] = records[flow].map { $0.merged(with: record) } ?? record
            }
        }
        return records
    }
}
