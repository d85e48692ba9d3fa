import CatalogDocuments
import Foundation
import Testing
import TourCore
import TourFixtures

@testable import OnboardingServer
@testable import ServerDashboard

/// The studio's edits of a draft (`CatalogDraft`), in process, on Mood Tracker's compiled document
/// (English with a pt-BR table).
@Suite("The studio's edits of a draft")
struct CatalogDraftTests {
    static func moodTracker() throws -> CatalogDocument {
        let printed = try Shell.run(
            BuiltExecutables.folder.appendingPathComponent("moodtracker").path, ["catalog", "--json"])
        return try CatalogDocument(text: printed.stdout)
    }

    /// A removed step's translations go with it: the next version's check would refuse them as
    /// translations of texts the catalog no longer has.
    @Test func aRemovedStepTakesItsTranslationsWithIt() throws {
        let document = try Self.moodTracker()
        let portuguese = try #require(LocaleTag("pt-BR"))
        #expect(
            document.catalog.strings.tables[portuguese]?.keys.contains {
                $0.hasPrefix("tutorial.viewHistory.")
            } == true)
        var next = document.catalog
        next.version += 1
        let draft = CatalogDraft(document: CatalogDocument(next, declarations: document.vocabulary))
        let removed = try draft.changing(
            FlowID("tutorial"), StepID("viewHistory"), .remove(.goOnAtNext), base: document.catalog
        ).document
        let table = try #require(removed.catalog.strings.tables[portuguese])
        #expect(!table.keys.contains { $0.hasPrefix("tutorial.viewHistory.") }, "\(table.keys.sorted())")
        #expect(
            table.keys.contains { $0.hasPrefix("tutorial.allSet.") }, "the other steps' translations stay")
        let problems = removed.catalog.problems(declaring: removed.vocabulary)
        #expect(problems.isEmpty, "\(problems.map(\.description))")
    }

    /// Saving the form with only the English title changed leaves the untouched pt-BR title made
    /// from the old English, so the page flags it out of date; a pt-BR text written now is made
    /// from today's English.
    @Test func anUntouchedTranslationStaysMadeFromTheOldSourceText() throws {
        let document = try Self.moodTracker()
        let draft = CatalogDraft(document: document)
        let portuguese = try #require(LocaleTag("pt-BR"))
        let english = document.catalog.strings.source
        let id = "tutorial.viewHistory.title"
        let oldEnglish = try #require(document.catalog.text(id))
        let translated = try #require(draft.translation(id, in: portuguese))
        // The form posts every locale's field: English changed, pt-BR as it was.
        let saved = try draft.applying([
            CatalogDraft.field(id, english): "Your mood history",
            CatalogDraft.field(id, portuguese): translated,
        ]).document
        let kept = try #require(saved.catalog.strings.tables[portuguese]?[id])
        #expect(kept.text == translated)
        #expect(
            kept.source == oldEnglish, "re-stamped as made from the new English: never flagged out of date")
        // Written now, it is made from the English as it is.
        let rewritten = try CatalogDraft(document: saved).applying([
            CatalogDraft.field(id, portuguese): "Seu histórico"
        ]).document
        #expect(rewritten.catalog.strings.tables[portuguese]?[id]?.source == "Your mood history")
    }
}
