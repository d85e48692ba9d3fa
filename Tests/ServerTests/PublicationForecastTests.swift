import CatalogDocuments
import Foundation
import TestThreads
import Testing
import TourCore
import TourFixtures

@testable import ServerPublishing

/// Where a publication or a rollback puts users mid-flow (`PublicationForecast`, which the studio's
/// confirmation pages show), in process on Mood Tracker's compiled document and a next version
/// made from it with the studio's own edits: the words for each step are checked here once, and
/// StudioTests reads them on the pages in a browser.
@Suite("What a publication does to users mid-flow", .offThePool)
struct PublicationForecastTests {
    static let tutorial = FlowID("tutorial")

    /// Mood Tracker's compiled document, and its next version with the first step renamed and the
    /// second removed (its users going on at the next).
    static func versions() throws -> (old: CatalogDocument, new: CatalogDocument) {
        let old = try CatalogDraftTests.moodTracker()
        var next = old.catalog
        next.version += 1
        let steps = try #require(old.catalog.flow(tutorial)).steps.map(\.id)
        try #require(steps.count >= 3, "the test needs a flow of three steps: \(steps)")
        let removed = try CatalogDraft(document: CatalogDocument(next, declarations: old.vocabulary))
            .changing(tutorial, steps[1], .remove(.goOnAtNext), base: old.catalog).document
        let renamed = try CatalogDraft(document: removed)
            .changing(tutorial, steps[0], .rename(StepID("firstLook")), base: old.catalog).document
        return (old, renamed)
    }

    static func entry(
        _ document: CatalogDocument, _ source: CatalogStore.Entry.Source, rollout: Int = 0,
        withdrawn: Bool = false
    ) throws -> CatalogStore.Entry {
        CatalogStore.Entry(
            app: "moodtracker", version: document.catalog.version, source: source, fingerprint: "f",
            rollout: rollout, recordedAt: 0, recordedBy: "test", withdrawnAt: withdrawn ? 1 : nil,
            document: try document.text())
    }

    @Test func aNewVersionMovesEachStepsUsersAsTheEngineWould() throws {
        let (old, new) = try Self.versions()
        let steps = try #require(old.catalog.flow(Self.tutorial)).steps.map(\.id)
        let compiled = try Self.entry(old, .compiled)
        let versions = PublicationForecast.flows(Self.tutorial, of: [compiled])
        let fates = PublicationForecast.fates(
            of: Self.tutorial, versions: versions, under: new.catalog,
            waiting: [steps[0].rawValue: 4, steps[1].rawValue: 1])
        #expect(
            fates == [
                .init(step: steps[0], waiting: 4, fates: ["move to firstLook"]),
                .init(step: steps[1], waiting: 1, fates: ["go on at \(steps[2])"]),
                .init(step: steps[2], waiting: 0, fates: ["stay on \(steps[2])"]),
            ])
    }

    @Test func aRollbackKeepsStepsTheOlderVersionHasAndPlacesTheRestByTheFlowsPolicy() throws {
        let (old, new) = try Self.versions()
        let steps = try #require(old.catalog.flow(Self.tutorial)).steps.map(\.id)
        let published = try Self.entry(new, .published, rollout: 40)
        let fates = PublicationForecast.fates(
            of: Self.tutorial, versions: PublicationForecast.flows(Self.tutorial, of: [published]),
            under: old.catalog, waiting: [:])
        let policy = try #require(old.catalog.flow(Self.tutorial)).unplacedStep
        let unplaced =
            policy == .restart
            ? "start the flow again (the flow's policy for a step it does not have)"
            : "go on at \(steps[2]) (the flow's policy for a step it does not have)"
        #expect(
            fates == [
                .init(step: StepID("firstLook"), waiting: 0, fates: [unplaced]),
                .init(step: steps[2], waiting: 0, fates: ["stay on \(steps[2])"]),
            ])
    }

    @Test func devicesRunTheLivePublicationsDownToTheFirstAtEveryoneElseTheirBinarys() throws {
        let (old, new) = try Self.versions()
        let compiled = try Self.entry(old, .compiled)
        var third = try Self.entry(new, .published, rollout: 100)
        third.version += 1
        let partial = try Self.entry(new, .published, rollout: 30)
        let withdrawn = try Self.entry(new, .published, rollout: 100, withdrawn: true)
        // A partial rollout: its users and the rest, on the binary's version.
        #expect(PublicationForecast.liveVersions([compiled, partial]) == [partial, compiled])
        #expect(PublicationForecast.live([compiled, partial])?.rollout == 30)
        #expect(PublicationForecast.versionBelow(partial, in: [compiled, partial]) == compiled)
        // One at 100% is all anyone runs; a withdrawn one nobody does.
        #expect(PublicationForecast.liveVersions([compiled, partial, third]) == [third])
        #expect(PublicationForecast.liveVersions([compiled, withdrawn]) == [compiled])
        #expect(PublicationForecast.versionBelow(third, in: [compiled, partial, third]) == partial)
        // A flow a version does not have is left out of that version's steps.
        #expect(PublicationForecast.flows(FlowID("nowhere"), of: [compiled, partial]).isEmpty)
    }
}
