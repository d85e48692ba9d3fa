import CatalogDocuments
import Foundation
import Testing
import TourCodec
import TourFixtures

@Suite("Catalog documents")
struct CatalogDocumentTests {
    static let declared = CatalogDeclarations(
        context: [
            .computed("hasItems", .flag, default: false, "items stored"),
            .computed("filledCount", .number, default: 0, "weeks filled"),
            .computed("weeks", .number, default: 0, "weeks lived"),
        ],
        effects: FixtureEffect.kinds, requests: ["connect"])

    @Test func theFixtureCatalogReadsBackEqualAndWritesTheSameBytes() throws {
        let document = CatalogDocument(Fixtures.catalog(), declarations: Self.declared)
        let text = try document.text()
        let read = try CatalogDocument(text: text)
        #expect(read.catalog == Fixtures.catalog())
        #expect(read == document)
        #expect(try read.text() == text)
        // The vocabulary is what the catalog uses: no prose, nothing it does not send.
        #expect(read.vocabulary.effects.map(\.name) == ["activate", "marked", "mood", "stored"])
        #expect(read.vocabulary.requests == ["connect"])
        #expect(read.vocabulary.context.map(\.name) == ["filledCount", "hasItems", "weeks"])
    }

    /// Any catalog, not only the products': generated ones using every part of the model.
    @Test(arguments: 0..<300)
    func generatedCatalogsRoundTrip(seed: Int) throws {
        var generator = CatalogGenerator(seed: UInt64(seed) &* 0x9E37_79B9)
        let catalog = generator.catalog()
        let declarations = generator.declarations(for: catalog)
        let document = CatalogDocument(catalog, declarations: declarations)
        let text = try document.text()
        let read = try CatalogDocument(text: text)
        #expect(read.catalog == catalog, "seed \(seed)")
        #expect(read.vocabulary == document.vocabulary, "seed \(seed)")
        #expect(try read.text() == text, "seed \(seed)")
        #expect(try read.fingerprint() == document.fingerprint())
    }

    @Test func theTextIsCanonicalWhateverOrderTheCatalogWasBuiltIn() throws {
        var catalog = Fixtures.catalog()
        var shuffled = catalog
        // Dictionaries and sets built in another order give the same bytes.
        shuffled.stateScopes = StateScopes(.user, except: ["b": .install, "a": .user])
        catalog.stateScopes = StateScopes(.user, except: ["a": .user, "b": .install])
        shuffled.migrations = [
            CatalogMigration(from: 2),
            CatalogMigration(from: 1, ["walk": FlowChanges(renamedSteps: ["x": "y", "p": "q"])]),
        ]
        catalog.migrations = [
            CatalogMigration(from: 1, ["walk": FlowChanges(renamedSteps: ["p": "q", "x": "y"])]),
            CatalogMigration(from: 2),
        ]
        let one = try CatalogDocument(catalog, declarations: Self.declared).text()
        let two = try CatalogDocument(shuffled, declarations: Self.declared).text()
        #expect(one == two)
        #expect(!one.contains("\n") && !one.contains("\": "), "compact: \(one.prefix(200))")
        #expect(one.hasPrefix("{\"app\":\"test\","))
    }

    @Test func theFingerprintIsTheSHA256OfTheTextAndChangesWithAnyWord() throws {
        let document = CatalogDocument(Fixtures.catalog(), declarations: Self.declared)
        let fingerprint = try document.fingerprint()
        #expect(fingerprint.count == 64)
        #expect(fingerprint == SHA256Hasher.hex(Array(try document.text().utf8)))
        #expect(CatalogDocument.short(fingerprint).count == 12)
        var changed = Fixtures.catalog()
        changed.flows[0].steps[0].content.title += "!"
        #expect(try CatalogDocument(changed, declarations: Self.declared).fingerprint() != fingerprint)
        var declarations = Self.declared
        declarations.effects[0].payload["extra"] = .optional(.text)
        #expect(
            try CatalogDocument(Fixtures.catalog(), declarations: declarations).fingerprint() != fingerprint)
        // A declaration the catalog does not use is not part of its document.
        declarations = Self.declared
        declarations.effects.append(EffectKind("unused", payload: ["x": .text]))
        declarations.context.append(.device("online", .flag, default: true, "network"))
        #expect(
            try CatalogDocument(Fixtures.catalog(), declarations: declarations).fingerprint() == fingerprint)
    }

    @Test func aDocumentIsReadStrictlyWithThePathOfEachProblem() throws {
        let text = try CatalogDocument(Fixtures.catalog(), declarations: Self.declared).text()
        func refusal(_ edit: (inout TourValue) -> Void) -> String {
            var value = (try? TourValue(jsonText: text)) ?? .null
            edit(&value)
            do {
                _ = try CatalogDocument(value: value)
                return "read"
            } catch {
                return error.description
            }
        }
        func step(_ value: inout TourValue, _ edit: (inout [String: TourValue]) -> Void) {
            guard case .object(var document) = value, case .list(var flows)? = document["flows"],
                case .object(var flow) = flows[0], case .list(var steps)? = flow["steps"],
                case .object(var first) = steps[0]
            else { return }
            edit(&first)
            steps[0] = .object(first)
            flow["steps"] = .list(steps)
            flows[0] = .object(flow)
            document["flows"] = .list(flows)
            value = .object(document)
        }
        let misspelt = refusal { step(&$0) { $0["includedWhenn"] = "always" } }
        #expect(misspelt.contains("flows[form].steps[welcome].includedWhenn"), "\(misspelt)")
        #expect(misspelt.contains("did you mean 'includedWhen'"), "\(misspelt)")
        let wrongKind = refusal { step(&$0) { $0["autoAdvanceAfter"] = "soon" } }
        #expect(
            wrongKind.contains("flows[form].steps[welcome].autoAdvanceAfter: expected a number"),
            "\(wrongKind)")
        let unknownOutcome = refusal {
            step(&$0) { $0["actions"] = [["name": "next", "outcome": "advanse"]] }
        }
        #expect(
            unknownOutcome.contains("actions[next].outcome: unknown 'advanse' (did you mean 'advance'?)"),
            "\(unknownOutcome)")
        let missing = refusal { step(&$0) { $0["content"] = ["title": "T"] } }
        #expect(missing.contains("flows[form].steps[welcome].content: missing 'body'"), "\(missing)")
        let newer = refusal { value in
            if case .object(var document) = value {
                document["format"] = .int(CatalogDocument.format + 1)
                value = .object(document)
            }
        }
        #expect(
            newer.contains(
                """
                document format \(CatalogDocument.format + 1) is newer than this build reads \
                (\(CatalogDocument.format))
                """
            ),
            "\(newer)")
        let null = refusal { step(&$0) { $0["autoAdvanceAfter"] = .null } }
        #expect(null.contains("steps[welcome].autoAdvanceAfter: null is not allowed"), "\(null)")
        #expect(refusal { _ in } == "read")
    }
}
