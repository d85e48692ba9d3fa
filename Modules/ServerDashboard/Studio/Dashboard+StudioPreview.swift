import AccountSync
import CatalogDocuments
import Foundation
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerPublishing
import TourCore

/// The studio's preview: a draft's card as the engine shows it on a device, in a locale and with
/// accessibility settings, and a walk onward through the card's actions.
extension Dashboard {
    func previewPage(_ revision: CatalogDrafts.Revision, request: Request, access: Access) throws -> Response
    {
        let query = request.uri.queryParameters
        let draft = CatalogDraft(document: try Self.readable(revision))
        let catalog = draft.catalog
        guard let flow = query.get("flow").flatMap({ FlowID($0) }).flatMap({ catalog.flow($0) }) else {
            throw DashboardError(
                .badRequest,
                "Choose a flow of the draft: \(catalog.flows.map(\.id.rawValue).joined(separator: ", ")).")
        }
        guard let step = query.get("step").map({ StepID($0) }) ?? flow.steps.first?.id, flow.step(step) != nil
        else {
            throw DashboardError(
                .badRequest,
                "Choose a step of \(flow.id): \(flow.steps.map(\.id.rawValue).joined(separator: ", ")).")
        }
        let locales = draft.locales.map(\.rawValue)
        let localeText = query.get("locale") ?? catalog.strings.source.rawValue
        guard let locale = LocaleTag(localeText), locales.contains(locale.rawValue) else {
            throw DashboardError(
                .badRequest, "The locale is one of the draft's: \(locales.joined(separator: ", ")).")
        }
        let sizes = InsightsPage.textSizes.map(\.name)
        let textSize = query.get("textSize") ?? "large"
        guard sizes.contains(textSize) else {
            throw DashboardError(.badRequest, "The text size is one of \(sizes.joined(separator: ", ")).")
        }
        func toggle(_ name: String) throws -> Bool {
            switch query.get(name) ?? "off" {
            case "on": return true
            case "off": return false
            default: throw DashboardError(.badRequest, "\(name) is on or off.")
            }
        }
        let voiceOver = try toggle("voiceOver")
        let reducedMotion = try toggle("reducedMotion")
        let walk = (query.get("walk") ?? "").split(separator: ",").map(String.init)
        guard walk.count <= 50, walk.allSatisfy(SyncAPI.isValidName) else {
            throw DashboardError(.badRequest, "A walk is at most 50 action names, separated by commas.")
        }
        let settings = AccessibilitySettings(
            voiceOver: voiceOver, reducedMotion: reducedMotion, textSize: textSize)
        let preview = CardPreview(
            draft: draft, flow: flow.id, step: step, walk: walk, locale: locale, settings: settings)
        let base = "/dashboard/apps/\(revision.app)/studio/drafts/\(revision.draft)"
        func href(walk: [String]) -> String {
            "\(base)/preview?flow=\(flow.id)&step=\(step)&locale=\(locale)&textSize=\(textSize)"
                + "&voiceOver=\(voiceOver ? "on" : "off")&reducedMotion=\(reducedMotion ? "on" : "off")"
                + (walk.isEmpty ? "" : "&walk=\(walk.joined(separator: ","))")
        }
        var notes: [String] = []
        if let refusal = preview.refusal { notes.append("The last action was refused: \(refusal)") }
        if let ended = preview.ended { notes.append(ended) }
        notes.append(
            """
            Shown as the engine shows it in \(locale), text size \(textSize), VoiceOver \
            \(voiceOver ? "on" : "off"), reduced motion \(reducedMotion ? "on" : "off"); \
            steps are shown whatever their conditions, and the product's own data (its fields) is empty.
            """
        )
        var sections: [InsightsPage.Section] = [
            .form(
                .init(
                    action: "\(base)/preview", method: "get",
                    fields: [
                        .init(name: "flow", label: "", type: "hidden", value: flow.id.rawValue),
                        .init(name: "step", label: "", type: "hidden", value: step.rawValue),
                        .init(
                            name: "locale", label: "Locale", type: "text", value: locale.rawValue,
                            options: locales),
                        .init(
                            name: "textSize", label: "Text size", type: "text", value: textSize,
                            options: sizes),
                        .init(
                            name: "voiceOver", label: "VoiceOver", type: "text",
                            value: voiceOver ? "on" : "off", options: ["off", "on"]),
                        .init(
                            name: "reducedMotion", label: "Reduced motion", type: "text",
                            value: reducedMotion ? "on" : "off", options: ["off", "on"]),
                    ], submit: "Show"))
        ]
        if let card = preview.card {
            sections.append(
                .card(
                    .init(
                        heading: "\(card.flow) · \(card.step)", language: locale.rawValue,
                        textSize: textSize,
                        progress: card.progressText,
                        title: card.title, body: card.body, details: card.details, hint: card.hint,
                        actions: card.actions.map {
                            .init($0.label ?? $0.name, href: href(walk: walk + [$0.name]))
                        },
                        spoken: voiceOver ? preview.spoken : [], notes: notes)))
        } else {
            sections += notes.map(InsightsPage.Section.text)
        }
        sections.append(
            .links(
                "Walk",
                [
                    .init("Start again from \(step)", href: href(walk: [])),
                    .init("Back to the draft", href: "\(base)?flow=\(flow.id)&step=\(step)"),
                ]))
        return Self.html(
            InsightsPage(
                title: "Preview of draft \(revision.draft)",
                subtitle: "\(revision.app) · version \(catalog.version) · revision \(revision.revision)",
                navigation: [
                    .init("All apps", href: "/dashboard"),
                    .init(revision.app, href: "/dashboard/apps/\(revision.app)"),
                    .init("Studio", href: "/dashboard/apps/\(revision.app)/studio"),
                    .init("Draft \(revision.draft)", href: base),
                ],
                signOut: access.session.formToken, sections: sections, footer: Self.footer))
    }
}
