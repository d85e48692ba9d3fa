import CatalogDocuments
import Foundation
import Hummingbird
import InsightsPages
import OnboardingServer
import ServerPublishing
import TourCodec
import TourCore

// The studio's editor: the forms of a draft's texts, steps and timers.
extension Dashboard {
    /// One step's texts in every locale, each with what is wrong with it beside it.
    static func editor(
        _ draft: CatalogDraft, revision: CatalogDrafts.Revision, flow: FlowDefinition, step: StepDefinition,
        problems: [CatalogProblem], base: String, token: String?, refused: RefusedSave? = nil
    ) -> InsightsPage.TextEditor {
        let source = draft.catalog.strings.source
        let texts = draft.texts(flow: flow.id, step: step.id)
        var fields: [InsightsPage.TextEditor.Field] = []
        var placed: Set<Int> = []
        for (id, text) in texts {
            let part = CatalogDraft.part(of: id, flow: flow.id, step: step.id)
            for locale in draft.locales {
                let name = CatalogDraft.field(id, locale)
                let stored = locale == source ? text : draft.translation(id, in: locale) ?? ""
                let value = refused?.values[name] ?? stored
                var problem: String?
                if let refused, refused.field == name {
                    problem = refused.message
                } else if let index = problems.firstIndex(where: {
                    $0.path.hasSuffix(id) && $0.path.contains(locale.rawValue)
                }) {
                    problem = problems[index].detail
                    placed.insert(index)
                } else if locale != source, value.isEmpty {
                    // A device falls back text by text along the locale's chain (pt-BR, pt, the source).
                    let fallback =
                        locale.chain(endingWith: source).dropFirst()
                        .first { $0 == source || draft.translation(id, in: $0) != nil } ?? source
                    problem = "Missing: no \(locale) text; users in \(locale) read the \(fallback) text."
                } else if locale != source, let made = draft.catalog.strings.tables[locale]?[id]?.source,
                    made != text
                {
                    problem =
                        "Out of date: translated from an earlier \(source) text (\"\(made.prefix(60))\")."
                }
                fields.append(
                    .init(
                        name: name, label: "\(locale)\(locale == source ? " (source)" : "")",
                        value: value, language: locale.rawValue, problem: problem, group: part))
            }
        }
        let names = Set(fields.map(\.name))
        let unplacedRefusal = refused.flatMap { refusal in
            refusal.field.map(names.contains) == true ? nil : refusal.message
        }
        let stepProblems =
            (unplacedRefusal.map { [$0] } ?? [])
            + problems.enumerated()
            .filter {
                !placed.contains($0.offset) && $0.element.flow == flow.id && $0.element.step == step.id
            }
            .map { "\($0.element.kind.rawValue): \($0.element.detail)" }
        let preview = "\(base)/preview?flow=\(flow.id)&step=\(step.id)"
        return InsightsPage.TextEditor(
            heading: "Step \(step.id): its texts in \(draft.locales.map(\.rawValue).joined(separator: ", "))",
            action: "\(base)/texts",
            hidden: (token.map { [("form_token", $0)] } ?? []) + [
                ("revision", String(revision.revision)), ("flow", flow.id.rawValue),
                ("step", step.id.rawValue),
            ],
            fields: fields, problems: stepProblems,
            links: draft.locales.map { .init("Preview in \($0)", href: "\(preview)&locale=\($0)") },
            submit: token == nil ? "Only editors save drafts" : "Save as a new revision")
    }

    /// A step's order, removal (with where its users go) and id, each its own small form.
    /// What each skip policy does, in words, for the studio's choice.
    static let skipPolicyLabels: [String: String] = [
        "recordSkipped": "it is kept as skipped and never shown again",
        "countsAsCompleted": "it counts as completed",
        "recordsNothing": "nothing is kept: it shows again at the next launch",
    ]

    static func stepForms(
        flow definition: FlowDefinition, step stepDefinition: StepDefinition, templates: [String],
        revision: CatalogDrafts.Revision,
        base: String, token: String
    ) -> [InsightsPage.Section] {
        let (flow, step) = (definition.id, stepDefinition.id)
        // The step its users go on at when it is removed: the one after it.
        let next = definition.steps.firstIndex { $0.id == step }.flatMap {
            definition.steps.indices.contains($0 + 1) ? definition.steps[$0 + 1].id : nil
        }
        let timer =
            stepDefinition.autoAdvanceAfter.map { $0.rounded() == $0 ? String(Int($0)) : String($0) } ?? ""
        let common: [InsightsPage.Form.Field] = [
            .init(name: "form_token", label: "", type: "hidden", value: token),
            .init(name: "revision", label: "", type: "hidden", value: String(revision.revision)),
            .init(name: "flow", label: "", type: "hidden", value: flow.rawValue),
            .init(name: "step", label: "", type: "hidden", value: step.rawValue),
        ]
        func op(_ name: String) -> InsightsPage.Form.Field {
            .init(name: "op", label: "", type: "hidden", value: name)
        }
        let action = "\(base)/steps"
        return [
            .form(
                .init(
                    action: action, method: "post", fields: common + [op("up")],
                    submit: """
                        Move \(step) up
                        """)),
            .form(
                .init(
                    action: action, method: "post", fields: common + [op("down")], submit: "Move \(step) down"
                )),
            .form(
                .init(
                    action: action, method: "post",
                    fields: common + [
                        op("remove"),
                        .init(
                            name: "users", label: "Its users then", type: "text", value: "goOnAtNext",
                            options: ["goOnAtNext", "restart"],
                            optionLabels: [
                                "goOnAtNext": next.map { "go on at the next step, \($0)" }
                                    ?? "finish the flow (it is the last step)",
                                "restart": "start \(definition.name) again",
                            ]),
                    ],
                    submit: "Remove \(step)")),
            .form(
                .init(
                    action: action, method: "post",
                    fields: common + [op("rename"), .init(name: "to", label: "New id", type: "text")],
                    submit: "Rename \(step)")),
            .form(
                .init(
                    action: action, method: "post",
                    fields: common + [
                        op("timer"),
                        .init(
                            name: "seconds", label: "Moves on by itself after (s, empty: waits for the user)",
                            type: "text", value: timer, optional: true),
                    ],
                    submit: "Set \(step)'s timer")),
            .form(
                .init(
                    action: action, method: "post",
                    fields: common + [
                        op("skip"),
                        .init(
                            name: "policy", label: "When a user skips \(flow)", type: "text",
                            value: definition.skip.rawValue,
                            options: SkipPolicy.allCases.map(\.rawValue),
                            optionLabels: Self.skipPolicyLabels),
                    ],
                    submit: "Set \(flow)'s skip policy")),
        ]
            + (templates.isEmpty
                ? []
                : [
                    .form(
                        .init(
                            action: action, method: "post",
                            fields: common + [
                                op("add"),
                                .init(
                                    name: "like", label: "Add a step after \(step), like", type: "text",
                                    value: templates[0], options: templates),
                                .init(name: "id", label: "Its id", type: "text"),
                            ],
                            submit: "Add the step"))
                ])
    }
}
