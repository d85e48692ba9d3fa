import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A card of a draft as a device shows it: the engine's own card for the step, in a locale and
/// with accessibility settings, and a walk onward by the card's actions (each replayed through the
/// engine from the step the walk started on; nothing of the engine is re-implemented here).
public struct CardPreview {
    public var card: Card?
    /// Why the last action of the walk was refused (the engine's words), if it was.
    public var refusal: String?
    /// How the walk ended when no card shows.
    public var ended: String?

    public init(
        draft: CatalogDraft, flow: FlowID, step: StepID, walk: [String], locale: LocaleTag,
        settings: AccessibilitySettings
    ) {
        let catalog = draft.catalog.localized(to: locale)
        let engine = TourEngine(catalog: catalog)
        let context = settings.context
        guard let definition = catalog.flow(flow),
            let start = definition.steps.firstIndex(where: { $0.id == step })
        else {
            card = nil
            ended = "The draft has no step \(step) in \(flow)."
            return
        }
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        var state = TourState(flows: [
            flow: .active(
                FlowRun(
                    plan: definition.steps.map(\.id), position: start, activation: 1,
                    catalogVersion: catalog.version))
        ])
        for action in walk {
            do {
                state = try engine.reduce(
                    state, .actionPerformed(action, parameters: [:]), at: now, context: context
                ).state
            } catch {
                refusal = error.description
                break
            }
        }
        card = engine.card(in: state, context: context)
        if card == nil {
            ended = "The flow ends here: \(state[flow: flow].status.rawValue)."
        }
    }

    /// What VoiceOver reads, in order: the progress, the title (a heading), the body, the details,
    /// the hint, then each action as a button.
    public var spoken: [String] {
        guard let card else { return [] }
        var lines: [String] = []
        if let progress = card.progressText { lines.append(progress) }
        lines.append("\(card.title), heading")
        if !card.body.isEmpty { lines.append(card.body) }
        lines += card.details
        if let hint = card.hint { lines.append(hint) }
        lines += card.actions.map { "\($0.label ?? $0.name), button" }
        return lines
    }
}
