import ArgumentParser
import CatalogDocuments
import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `catalog edit FILE STEP CHANGE [VALUE...]`: one change to a draft document, made by
/// `CatalogDraft` as the dashboard's studio makes it (the same rules, the same refusals, the same
/// migration written for a removed or renamed step).
struct CatalogEditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Change one step of a catalog document file, as the dashboard's studio does.",
        discussion: """
            STEP is FLOW.STEP. CHANGE and its values: up; down; remove goOnAtNext|restart (where the \
            step's users go); rename NEW-ID; timer SECONDS|none; skip recordSkipped|countsAsCompleted|\
            recordsNothing (the flow's policy); add LIKE NEW-ID (a new step after STEP, shaped like LIKE, a \
            step of this build's catalog); text PART TEXT (the step's title, body, hint, ... in the \
            source locale, or with --locale L in L's translation; an empty TEXT removes a translation). \
            A removal or a rename writes the migration the next release needs. A document of a version \
            this build has recorded becomes the next version first. FILE is rewritten (or --output \
            written) only when the change is accepted; a refused change writes nothing. Then check the \
            document: `check --catalog FILE`.
            """)

    @ParentCommand var parent: CatalogCommand
    @Argument(help: "The catalog document file to change.", completion: .file(extensions: ["json"]))
    var file: String
    @Argument(help: ArgumentHelp("The step: FLOW.STEP.", valueName: "step"))
    var step: String
    @Argument(help: ArgumentHelp("up, down, remove, rename, timer, skip, add or text.", valueName: "change"))
    var change: String
    /// Taken as given, a leading `-` included (a text may start with one).
    @Argument(
        parsing: .allUnrecognized, help: ArgumentHelp("The change's values (see above).", valueName: "value"))
    var values: [String] = []
    @Option(
        name: .customLong("output"),
        help: ArgumentHelp("Write the changed document here instead of over FILE.", valueName: "file"),
        completion: .file(extensions: ["json"]))
    var output: String?

    /// Each change and the values it takes.
    static let changes: KeyValuePairs<String, [String]> = [
        "up": [], "down": [], "remove": ["goOnAtNext|restart"], "rename": ["NEW-ID"],
        "timer": ["SECONDS|none"], "skip": ["POLICY"], "add": ["LIKE", "NEW-ID"], "text": ["PART", "TEXT"],
    ]

    /// With `text`, the translation to change: the command line's `--locale` (nil: the source).
    var locale: String? { parent.root.options.run.locale }

    func run() async throws {
        let catalogs = CatalogSources(CLIEnvironment.current)
        var document = try CatalogSources.read(file)
        let product = catalogs.product
        guard document.catalog.app == product.catalog.app else {
            throw CLIFailure.usage(
                """
                \(file) is \(document.catalog.app)'s catalog, not \(product.catalog.app)'s; give one of \
                \(catalogs.cli.displayName)'s documents
                """
            )
        }
        // A recorded version is history: the edit makes the next one. (A version not yet recorded,
        // such as the first of a product that has not shipped, is still a draft and keeps its number.)
        var renumbered: Int?
        if let newest = catalogs.history.versions.max(), document.catalog.version <= newest {
            document = CatalogDraft(document: document).versioned(newest + 1)
            renumbered = newest + 1
        }
        let (flow, stepID) = try place(in: document.catalog)
        let (changed, notes) = try edit(document, flow: flow, step: stepID, catalogs: catalogs)
        guard !notes.isEmpty else {
            if parent.root.options.json {
                Output.document(
                    try TourValue.object(["file": .string(file), "changes": .list([])]).jsonText())
            } else {
                Output.line("Nothing changed: \(file) is left as it was.")
            }
            return
        }
        let target = output ?? file
        let text = try changed.text()
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: target), options: .atomic)
        } catch {
            throw CLIFailure.usage("cannot write '\(target.quotable)': \(error)")
        }
        // What `check --catalog` finds in it.
        let problems =
            Check.problems(of: changed, against: product)
            + Check.historyAndTranslationProblems(
                of: changed, history: catalogs.history, allowingGapsBelow: nil)
        if parent.root.options.json {
            Output.document(
                try TourValue.object([
                    "file": .string(target), "catalogVersion": .int(changed.catalog.version),
                    "fingerprint": .string(try changed.fingerprint()),
                    "changes": .list(notes.map(TourValue.string)), "problems": .int(problems.count),
                ]).jsonText())
            return
        }
        let version = renumbered.map { " (now version \($0), after the recorded ones)" } ?? ""
        Output.line("\(notes.joined(separator: "; ")). Wrote \(target)\(version).")
        let one = problems.count == 1
        Output.line(
            problems.isEmpty
                ? "It checks clean."
                : """
                It has \(problems.count) problem\(one ? "" : "s"): \
                `\(catalogs.cli.executable) check --catalog \(target)` lists \(one ? "it" : "them").
                """)
    }

    /// The flow and step STEP names in `catalog`.
    private func place(in catalog: TourCatalog) throws -> (FlowID, StepID) {
        let steps = catalog.flows.flatMap { flow in flow.steps.map { "\(flow.id).\($0.id)" } }
        let parts = step.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, let flow = catalog.flow(FlowID(parts[0])), flow.step(StepID(parts[1])) != nil
        else {
            throw Self.refusal(
                "\(file) has no step '\(step.quotable)' (a step is FLOW.STEP)", given: step, allowed: steps)
        }
        return (flow.id, StepID(parts[1]))
    }

    /// The document with the change made, and the change in words (none when nothing changed).
    private func edit(
        _ document: CatalogDocument, flow: FlowID, step stepID: StepID, catalogs: CatalogSources
    ) throws -> (CatalogDocument, [String]) {
        let names = Self.changes.map(\.key)
        guard let expected = Self.changes.first(where: { $0.key == change })?.value else {
            throw Self.refusal("'\(change.quotable)' is not a change", given: change, allowed: names)
        }
        guard values.count == expected.count else {
            let usage = "catalog edit FILE STEP " + ([change] + expected).joined(separator: " ")
            let given = values.isEmpty ? "none" : values.map { "'\($0.quotable)'" }.joined(separator: ", ")
            let takes =
                expected.isEmpty ? "no value" : "\(expected.count) (\(expected.joined(separator: " ")))"
            throw CLIFailure.usage("\(change) takes \(takes); given: \(given). Usage: \(usage)")
        }
        guard locale == nil || change == "text" else {
            throw CLIFailure.usage("--locale goes with `text` (a step's text in a translation)")
        }
        let draft = CatalogDraft(document: document)
        do {
            if change == "text" {
                return try editText(draft, flow: flow, step: stepID)
            }
            var fields = ["op": change]
            switch change {
            case "remove": fields["users"] = values[0]
            case "rename": fields["to"] = values[0]
            case "timer": fields["seconds"] = values[0] == "none" ? "" : values[0]
            case "skip": fields["policy"] = values[0]
            case "add": (fields["like"], fields["id"]) = (values[0], values[1])
            default: break
            }
            let templates = catalogs.product.catalog.flows.flatMap(\.steps)
            let stepChange = try CatalogDraft.stepChange(fields, templates: templates)
            // The version before the draft's, which its migration starts from; before a first
            // version, none, so no step has users to place (a catalog without flows says so).
            let before = document.catalog.version - 1
            var nothingShipped = document.catalog
            nothingShipped.flows = []
            let base =
                before < 1
                ? nothingShipped
                : catalogs.history.releases[before]?.catalog
                    ?? (catalogs.product.catalog.version == before ? catalogs.product.catalog : nil)
            let (changed, note) = try draft.changing(flow, stepID, stepChange, base: base)
            return (changed, [note])
        } catch let refusal as CatalogDraft.Refusal {
            throw CLIFailure.usage("\(refusal.message) \(file) is left as it was.")
        }
    }

    private func editText(_ draft: CatalogDraft, flow: FlowID, step stepID: StepID) throws -> (
        CatalogDocument, [String]
    ) {
        let texts = draft.texts(flow: flow, step: stepID).map(\.id)
        let parts = texts.map { CatalogDraft.part(of: $0, flow: flow, step: stepID) }
        guard let index = parts.firstIndex(of: values[0]) else {
            throw Self.refusal(
                "\(flow).\(stepID) has no text '\(values[0].quotable)'", given: values[0], allowed: parts)
        }
        let source = draft.catalog.strings.source
        let localeNames = draft.locales.map(\.rawValue)
        guard let tag = locale.map({ LocaleTag($0) }) ?? source else {
            throw Self.refusal(
                "'\((locale ?? "").quotable)' is not a locale of \(file)", given: locale ?? "",
                allowed: localeNames)
        }
        let (document, changes) = try draft.applying([CatalogDraft.field(texts[index], tag): values[1]])
        return (document, changes.map { "\($0) set" })
    }

    /// A usage refusal that names what is allowed, and the nearest of it to what was given.
    static func refusal(_ what: String, given: String, allowed: [String]) -> CLIFailure {
        let suggestion = NameSuggestion.nearest(to: given, in: allowed)
        let nearest = suggestion.map { " Did you mean '\($0)'?" } ?? ""
        return .usage(
            "\(what).\(nearest) Allowed: \(allowed.joined(separator: ", ")).", allowed: allowed,
            suggestion: suggestion)
    }
}
