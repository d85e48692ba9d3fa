import CatalogDocuments
import Foundation
import Testing
import TourFixtures

/// The release history check: what a careless release looks like to `check`, and what a careful
/// one over several versions looks like.
@Suite("Catalog release history")
struct CatalogHistoryTests {
    static let declared = CatalogDeclarations(
        context: [
            .computed("hasItems", .flag, default: false, "items"),
            .computed("filledCount", .number, default: 0, "filled"),
            .computed("weeks", .number, default: 0, "weeks"),
        ],
        effects: FixtureEffect.kinds, requests: ["connect"])

    static func document(_ catalog: TourCatalog) -> CatalogDocument {
        CatalogDocument(catalog, declarations: declared)
    }

    static func recorded(_ catalogs: TourCatalog...) throws -> [RecordedCatalog] {
        try catalogs.map { RecordedCatalog(file: "\($0.version).json", text: try document($0).text()) }
    }

    static func problems(_ today: TourCatalog, history: [RecordedCatalog]) -> [CatalogProblem] {
        CatalogHistory(history, app: today.app).problems(today: document(today))
    }

    /// The fixture catalog with its walk flow edited.
    static func editing(_ version: Int = 1, _ edit: (inout FlowDefinition) -> Void) -> TourCatalog {
        var catalog = Fixtures.catalog()
        catalog.version = version
        let index = catalog.flows.firstIndex { $0.id == "walk" } ?? 0
        edit(&catalog.flows[index])
        return catalog
    }

    @Test func todaysRecordedCatalogHasNoProblems() throws {
        let history = try Self.recorded(Fixtures.catalog())
        #expect(Self.problems(Fixtures.catalog(), history: history).isEmpty)
        // A new product without a history, at its first version, is fine too.
        #expect(Self.problems(Fixtures.catalog(), history: []).isEmpty)
    }

    @Test func anUndeclaredChangeAtTheSameVersionIsRefusedNamingFlowAndStep() throws {
        let history = try Self.recorded(Fixtures.catalog())
        let removed = Self.problems(
            Self.editing { $0.steps.removeAll { $0.id == "modal" } }, history: history)
        #expect(Set(removed.map(\.kind)) == [.changedWithoutVersion])
        let step = try #require(removed.first { $0.flow == "walk" && $0.step == "modal" }, "\(removed)")
        #expect(step.detail.contains("raise the catalog's version to 2 and declare CatalogMigration(from: 1"))
        // The step took the only effect of its kind with it: the vocabulary the document uses changed too.
        #expect(removed.contains { $0.detail.contains("vocabulary") || $0.detail.contains("\"stored\"") })

        let renamed = Self.problems(Self.editing { $0.steps[2].id = "addOne" }, history: history)
        #expect(
            renamed.contains { $0.step == "modal" && $0.detail.contains("reads like the added step addOne") },
            "\(renamed)")
        #expect(renamed.contains { $0.step == "addOne" && $0.detail.contains("step addOne added") })

        let reordered = Self.problems(Self.editing { $0.steps.swapAt(0, 1) }, history: history)
        #expect(reordered.count == 1)
        #expect(reordered.first?.kind == .changedWithoutVersion && reordered.first?.flow == "walk")
        #expect(reordered.first?.step == "tapTarget", "\(reordered)")
        #expect(reordered.first?.detail.contains("steps reordered: intro, tapTarget") == true)

        let reworded = Self.problems(Self.editing { $0.steps[0].content.title = "Hello" }, history: history)
        #expect(reworded.first?.detail.contains(#"title "Intro" → "Hello""#) == true, "\(reworded)")
    }

    @Test func aNewVersionMustPlaceEveryStepOfEveryRecordedVersion() throws {
        let history = try Self.recorded(Fixtures.catalog())
        // Version 2 drops a step and renames another without declaring either.
        let careless = Self.editing(2) {
            $0.steps.removeAll { $0.id == "modal" }
            $0.steps[0].id = "hello"
        }
        let problems = Self.problems(careless, history: history)
        #expect(Set(problems.map(\.kind)) == [.unplacedStep])
        #expect(Set(problems.compactMap(\.step)) == ["modal", "intro"])
        #expect(
            problems.allSatisfy {
                $0.flow == "walk" && $0.detail.contains("declare CatalogMigration(from: 1")
            })
        // Declared, it passes.
        var careful = careless
        careful.migrations = [
            CatalogMigration(
                from: 1,
                ["walk": FlowChanges(renamedSteps: ["intro": "hello"], removedSteps: ["modal": .goOnAtNext])])
        ]
        #expect(Self.problems(careful, history: history).isEmpty)
        // A reorder needs no declaration once the version is raised.
        #expect(Self.problems(Self.editing(2) { $0.steps.swapAt(0, 1) }, history: history).isEmpty)
    }

    /// A user parked on version 1 for a year must still be placed by version 3.
    @Test func aChainOfThreeVersionsPlacesUsersOfTheFirst() throws {
        let v1 = Fixtures.catalog()
        var v2 = Self.editing(2) { $0.steps[1].id = "tapHere" }
        v2.migrations = [
            CatalogMigration(from: 1, ["walk": FlowChanges(renamedSteps: ["tapTarget": "tapHere"])])
        ]
        var v3 = Self.editing(3) {
            $0.steps[1].id = "tapHere"
            $0.steps.removeAll { $0.id == "staged" }
        }
        v3.migrations =
            v2.migrations + [
                CatalogMigration(from: 2, ["walk": FlowChanges(removedSteps: ["staged": .goOnAtNext])])
            ]
        let history = try Self.recorded(v1, v2)
        #expect(Self.problems(v3, history: history).isEmpty, "\(Self.problems(v3, history: history))")

        // Version 3 that forgot version 1's migration strands users parked on tapTarget since version 1.
        var forgetful = v3
        forgetful.migrations = [
            CatalogMigration(from: 2, ["walk": FlowChanges(removedSteps: ["staged": .goOnAtNext])])
        ]
        let problems = Self.problems(forgetful, history: history)
        #expect(problems.map(\.kind) == [.unplacedStep], "\(problems)")
        #expect(problems.first?.step == "tapTarget")
        #expect(problems.first?.detail.contains("in release 1") == true)
        // And version 2's history must be there: a version 4 over history [1] is missing 2 and 3.
        var v4 = v3
        v4.version = 4
        let missing = Self.problems(v4, history: try Self.recorded(v1)).filter { $0.kind == .missingRelease }
        #expect(missing.map(\.detail).allSatisfy { $0.contains("is in no history given") })
        #expect(missing.count == 2)
    }

    @Test func versionsOnlyRiseAndEachIsRecorded() throws {
        var v2 = Fixtures.catalog()
        v2.version = 2
        let behind = Self.problems(Fixtures.catalog(), history: try Self.recorded(Fixtures.catalog(), v2))
        #expect(behind.map(\.kind) == [.versionBehindHistory])
        // A history that starts later than 1 and today's version far ahead of it.
        var v5 = Fixtures.catalog()
        v5.version = 5
        #expect(Self.problems(v5, history: []).map(\.kind) == [.missingRelease])
    }

    @Test func migrationsNameOnlyWhatTheirVersionsHave() throws {
        var v2 = Self.editing(2) { $0.steps[1].id = "tapHere" }
        v2.migrations = [
            CatalogMigration(
                from: 1,
                [
                    "walk": FlowChanges(
                        renamedSteps: ["tapTarget": "tapHer", "intr": "intro"],
                        removedSteps: ["finale": .restart],
                        renamedActions: ["sav": "save"]),
                    "wlak": FlowChanges(),
                ]),
            CatalogMigration(from: 2),
        ]
        let problems = Self.problems(v2, history: try Self.recorded(Fixtures.catalog()))
        let details = problems.filter { $0.kind == .unknownMigrationReference }.map(\.detail)
        #expect(
            details.contains {
                $0.contains(
                    "renames step intr, which version 1 of flow walk does not have (did you mean 'intro'?)")
            }, "\(details)")
        #expect(
            details.contains {
                $0.contains(
                    """
                    renames tapTarget to step tapHer, which version 2 of flow walk does not have (did \
                    you mean 'tapHere'?)
                    """
                )
            })
        #expect(
            details.contains { $0.contains("removes step finale, which version 2 of flow walk still has") })
        #expect(
            details.contains {
                $0.contains(
                    "renames action sav, which version 1 of flow walk does not have (did you mean 'save'?)")
            })
        #expect(
            details.contains {
                $0.contains("changes flow wlak, which version 1 does not have (did you mean 'walk'?)")
            })
        #expect(
            problems.contains {
                $0.kind == .migrationOutOfRange
                    && $0.detail.contains("not older than the catalog's version 2")
            })
        // The rename that points nowhere also leaves tapTarget unplaced.
        #expect(problems.contains { $0.kind == .unplacedStep && $0.step == "tapTarget" })
    }

    @Test func aFlowThatIsGoneMustBeDeclaredRemoved() throws {
        var v2 = Fixtures.catalog()
        v2.version = 2
        v2.flows.removeAll { $0.id == "tip" }
        let problems = Self.problems(v2, history: try Self.recorded(Fixtures.catalog()))
        #expect(problems.map(\.kind) == [.unplacedFlow])
        #expect(problems.first?.detail.contains(#"CatalogMigration(from: 1, removedFlows: ["tip"])"#) == true)
        v2.migrations = [CatalogMigration(from: 1, removedFlows: ["tip"])]
        #expect(Self.problems(v2, history: try Self.recorded(Fixtures.catalog())).isEmpty)
    }

    @Test func recordedFilesAreCanonicalDocumentsOfTheirVersion() throws {
        let text = try Self.document(Fixtures.catalog()).text()
        let cases: [(RecordedCatalog, String)] = [
            (
                RecordedCatalog(
                    file: "1.json",
                    text: text.replacingOccurrences(of: "\"Intro\"", with: "\"Intro!\"") + "\n"),
                "edited by hand"
            ),
            (RecordedCatalog(file: "2.json", text: text), "not test's version 2"),
            (RecordedCatalog(file: "first.json", text: text), "named VERSION.json"),
            (RecordedCatalog(file: "1.json", text: "{\"format\": 1}"), "not a catalog document"),
        ]
        for (file, words) in cases {
            let problems = CatalogHistory([file], app: "test").problems(
                today: Self.document(Fixtures.catalog()))
            #expect(
                problems.contains { $0.kind == .unreadableRelease && $0.detail.contains(words) },
                "\(words): \(problems)")
        }
    }
}
