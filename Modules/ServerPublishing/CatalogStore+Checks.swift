import AccountSync
import CatalogDocuments
import Crypto
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import TourCodec
import TourCore

// What publishing checks before it writes: a guarded rollout's plan, the build's checks.
extension CatalogStore {
    /// The plan for the checked document (its first flow guarded when none is named) and the
    /// version it replaces (the newest live one below it), and every problem with them.
    static func guardedPlan(
        _ asked: GuardedRollout.Plan, check: PublicationCheck, existing: [Entry]
    ) -> (plan: GuardedRollout.Plan, baseline: Int, problems: [String]) {
        guard let catalog = check.document?.catalog else { return (asked, 0, check.problems) }
        var plan = asked
        if plan.guardrail.flow.isEmpty, let first = catalog.flows.first {
            plan.guardrail.flow = first.id.rawValue
        }
        var problems = plan.problems
        if existing.contains(where: { $0.version == catalog.version }) {
            problems.append(
                """
                version \(catalog.version) of \(catalog.app) is stored already: a guarded rollout starts \
                with a new version
                """
            )
        }
        if let flow = catalog.flows.first(where: { $0.id.rawValue == plan.guardrail.flow }) {
            if case .step(let step) = plan.guardrail.metric,
                !flow.steps.contains(where: { $0.id.rawValue == step })
            {
                problems.append(
                    "the guardrail's step \(step) is not a step of \(flow.id.rawValue) (its steps: "
                        + "\(flow.steps.map(\.id.rawValue).joined(separator: ", ")))")
            }
        } else {
            problems.append(
                "the guardrail's flow \(plan.guardrail.flow) is not in the document (its flows: "
                    + "\(catalog.flows.map(\.id.rawValue).joined(separator: ", ")))")
        }
        let baseline = existing.filter {
            $0.version < catalog.version
                && ($0.source == .compiled || ($0.withdrawnAt == nil && $0.rollout > 0))
        }.map(\.version).max()
        if baseline == nil {
            problems.append(
                """
                no earlier version of \(catalog.app) is live, so there is nothing to guard against: \
                publish it without stages
                """
            )
        }
        return (plan, baseline ?? 0, problems)
    }

    /// The check publishing runs on `text`, against the app's stored documents `existing` (the
    /// newest compiled one's vocabulary, and every version below the document's as history); nil
    /// when no compiled catalog is registered (there is no vocabulary to check against). The
    /// studio runs it on every draft page without storing anything.
    public static func check(_ text: String, app: String, existing: [Entry]) -> PublicationCheck? {
        guard let binary = existing.last(where: { $0.source == .compiled }),
            let vocabulary = try? CatalogDocument(text: binary.document).vocabulary
        else { return nil }
        let version = (try? CatalogDocument(text: text))?.catalog.version
        return PublicationCheck(
            text: text, app: app, earlier: recorded(existing, before: version), vocabulary: vocabulary,
            keeper: .server)
    }
}
