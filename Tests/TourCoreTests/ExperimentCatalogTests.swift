import CatalogDocuments
import Foundation
import Testing
import TourCodec
import TourFixtures

/// Experiments in catalog documents (format 2) and the checks that refuse one that cannot run or
/// be measured.
@Suite("Experiments in catalogs")
struct ExperimentCatalogTests {
    @Test func aDocumentWithAnExperimentIsFormat2AndReadsBackAsWritten() throws {
        let catalog = ExperimentFixture.catalog()
        #expect(catalog.problems(declaring: ExperimentFixture.declarations).isEmpty)
        let document = CatalogDocument(catalog, declarations: ExperimentFixture.declarations)
        let text = try document.text()
        #expect(text.contains(#""format":2"#))
        #expect(text.contains(#""goal":{"effect":"activated"}"#), "\(text)")
        #expect(text.contains(#"{"holdout":true,"name":"holdout","weight":10}"#), "\(text)")
        let read = try CatalogDocument(text: text)
        #expect(read.catalog == catalog)
        #expect(try read.text() == text)
        // Without an experiment the document stays format 1, as every release before wrote it.
        let plain = CatalogDocument(
            ExperimentFixture.catalog(experiment: nil), declarations: ExperimentFixture.declarations)
        #expect(try plain.text().contains(#""format":1"#))
        // A format-1 document cannot carry one (a build before experiments would misread it).
        let mislabelled = text.replacingOccurrences(of: #""format":2"#, with: #""format":1"#)
        #expect(throws: CatalogDocumentError.self) { try CatalogDocument(text: mislabelled) }
        let bad = text.replacingOccurrences(
            of: #""goal":{"effect":"activated"}"#, with: #""goal":"conversion""#)
        #expect(throws: CatalogDocumentError.self) { try CatalogDocument(text: bad) }
    }

    @Test(arguments: [
        (
            Experiment("x", variants: [.init("a", weight: 1), .init("off", weight: 1, shows: .nothing)]),
            "a holdout never completes the flow"
        ),
        (
            Experiment("x", variants: [.init("a", weight: 1), .init("b", weight: 1)], control: "c"),
            "the control 'c' is not one of its variants"
        ),
        (Experiment("x", variants: [.init("a", weight: 1)]), "at least two variants"),
        (
            Experiment("x", variants: [.init("a", weight: 0), .init("b", weight: 0)]),
            "no variant has a positive weight"
        ),
        (
            Experiment(
                "x", variants: [.init("a", weight: 1), .init("b", weight: 1)], goal: .effect("tourEnded2")),
            "'tourEnded2', which the handler does not declare"
        ),
        (
            Experiment(
                "x", variants: [.init("a", weight: 1), .init("b", weight: 1)], goal: .effect("unsent")),
            "no flow, step or action of the catalog sends"
        ),
        (
            Experiment("x", variants: [.init("a", weight: 1), .init("b", weight: 1, shows: .steps([]))]),
            "shows no step"
        ),
        (
            Experiment("x y", variants: [.init("a", weight: 1), .init("b", weight: 1)]),
            "experiment id 'x y' must be"
        ),
    ])
    func anExperimentThatCannotRunOrBeMeasuredIsRefusedByName(_ experiment: Experiment, _ words: String) {
        var declarations = ExperimentFixture.declarations
        declarations.effects.append(EffectKind("unsent"))
        let problems = ExperimentFixture.catalog(experiment: experiment).problems(declaring: declarations)
        #expect(
            problems.contains { $0.detail.contains(words) && $0.path.hasPrefix("flows[tour].experiment") },
            "\(problems)")
    }
}
