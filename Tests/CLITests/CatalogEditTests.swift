import CatalogDocuments
import Foundation
import TestThreads
import Testing
import TourCodec
import TourCore
import TourFixtures
import TourRuntime

/// `catalog edit`, run as the built executables for every product: a change is the one the
/// studio makes (`CatalogDraft`, byte for byte), a document of a recorded version becomes the next
/// version, a removal or a rename writes its migration so the document checks clean against the
/// history, and every refusal leaves the file as it was and says what is allowed.
@Suite("Editing a catalog document through the CLIs", .ownThread)
struct CatalogEditTests {
    /// This build's document, written to a file in the CLI's folder.
    static func exported(_ cli: CLI, name: String = "draft.json") throws -> String {
        let shown = try cli.run("catalog", "--json")
        #expect(shown.status == 0, "\(shown.stderr)")
        let path = cli.folder.appendingPathComponent(name).path
        try Data(shown.stdout.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func read(_ path: String) throws -> CatalogDocument {
        let data = try #require(FileManager.default.contents(atPath: path))
        return try CatalogDocument(text: String(decoding: data, as: UTF8.self))
    }

    /// The first flow with two steps or more, and its first two steps.
    static func twoSteps(_ catalog: TourCatalog) throws -> (FlowID, StepID, StepID) {
        let flow = try #require(
            catalog.flows.first { $0.steps.count >= 2 }, "\(catalog.app) has no such flow")
        return (flow.id, flow.steps[0].id, flow.steps[1].id)
    }

    /// What each test starts from: `executable` run as a CLI, its product, this build's document
    /// in a file (and its bytes), and the first two steps of a flow that has two.
    struct Start {
        var cli: CLI
        var product: Product
        var path: String
        var original: Data
        var flow: FlowID
        var first: StepID
        var second: StepID

        var parts: (CLI, Product, String, Data, FlowID, StepID, StepID) {
            (cli, product, path, original, flow, first, second)
        }

        init(_ executable: String) throws {
            cli = try CLI(executable)
            product = try CatalogCommandTests.product(executable)
            path = try CatalogEditTests.exported(cli)
            original = try #require(FileManager.default.contents(atPath: path))
            (flow, first, second) = try CatalogEditTests.twoSteps(product.catalog)
        }
    }

    @Test(arguments: CommandLineTests.products)
    func aRenameIsTheStudiosChangeWithItsMigration(executable: String) throws {
        let (cli, product, path, _, flow, first, second) = try Start(executable).parts
        let edited = try cli.run("catalog", "edit", path, "\(flow).\(second)", "rename", "renamedByTheCLI")
        #expect(edited.status == 0, "\(edited.stderr)")
        #expect(edited.stdout.contains("\(flow).\(second) renamed renamedByTheCLI"), "\(edited.stdout)")
        #expect(edited.stdout.contains("It checks clean."), "\(edited.stdout)")

        // What the studio's draft makes of the same change, from the same document, byte for byte.
        let (next, base) = try Self.edited(executable, product)
        let draft = CatalogDraft(document: CatalogDraft(document: product.document).versioned(next))
        let studio = try draft.changing(flow, second, .rename(StepID("renamedByTheCLI")), base: base)
        let written = try #require(FileManager.default.contents(atPath: path))
        #expect(String(decoding: written, as: UTF8.self) == (try studio.document.text()))

        let document = try Self.read(path)
        #expect(document.catalog.version == next)
        let check = try cli.run("check", "--catalog", path)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        // A second change to the same draft keeps its number (and adds to its migration).
        let removed = try cli.run("catalog", "edit", path, "\(flow).\(first)", "remove", "restart")
        #expect(removed.status == 0, "\(removed.stderr)")
        let after = try Self.read(path)
        #expect(after.catalog.version == next)
        #expect(after.catalog.flow(flow)?.step(first) == nil)
        #expect(try cli.run("check", "--catalog", path).status == 0)
        guard next > 1 else {
            // A first version has no users to place: nothing to migrate.
            #expect(after.catalog.migrations.isEmpty, "\(after.catalog.migrations)")
            return
        }
        let both = try #require(after.catalog.migrations.first { $0.from == next - 1 })
        #expect(both.flows[flow]?.removedSteps[first] == .restart)
        #expect(both.flows[flow]?.renamedSteps[second] == StepID("renamedByTheCLI"))
    }

    /// The version an edit of this build's document makes, and the catalog its migration starts
    /// from: the next version after a recorded one (it shipped, and is history); a version not yet
    /// recorded (a product that has not shipped) keeps its number, and its first version starts
    /// from nothing.
    static func edited(_ executable: String, _ product: Product) throws -> (version: Int, base: TourCatalog) {
        let registration = try #require(registeredProducts.first { $0.executable == executable })
        let version = product.catalog.version
        if registration.releases.contains(where: { $0.file == "\(version).json" }) {
            return (version + 1, product.catalog)
        }
        guard version > 1 else {
            var nothing = product.catalog
            nothing.flows = []
            return (version, nothing)
        }
        let data = try CatalogCommandTests.recorded(executable, version: version - 1)
        return (version, try CatalogDocument(text: String(decoding: data, as: UTF8.self)).catalog)
    }

    @Test(arguments: CommandLineTests.products)
    func aTextIsSetInTheSourceLocaleAndJSONSaysWhatChanged(executable: String) throws {
        let (cli, product, path, _, flow, first, _) = try Start(executable).parts
        let answer = try cli.json(
            "catalog", "edit", path, "\(flow).\(first)", "text", "title", "- A title, edited")
        let id = "\(flow).\(first).title"
        #expect(answer["changes"] as? [String] == ["\(id) in \(product.catalog.strings.source) set"])
        #expect(answer["catalogVersion"] as? Int == (try Self.edited(executable, product).version))
        #expect(try Self.read(path).catalog.text(id) == "- A title, edited")
        // The same text again is no change, and the file is not rewritten.
        let before = try #require(FileManager.default.contents(atPath: path))
        let again = try cli.run(
            "catalog", "edit", path, "\(flow).\(first)", "text", "title", "- A title, edited")
        #expect(again.status == 0)
        #expect(again.stdout.contains("Nothing changed"), "\(again.stdout)")
        #expect(FileManager.default.contents(atPath: path) == before)
    }

    @Test(arguments: CommandLineTests.products)
    func aRefusedEditWritesNothingAndSaysWhatIsAllowed(executable: String) throws {
        let (cli, product, path, original, flow, first, second) = try Start(executable).parts
        let refusals: [(arguments: [String], says: String)] = [
            (["\(flow).noSuchStep", "up"], "Allowed: \(flow).\(first), \(flow).\(second)"),
            (["\(flow).\(first)", "renme", "x"], "Did you mean 'rename'? Allowed: up, down, remove, rename"),
            (["\(flow).\(first)", "up"], "\(first) is already the first step of \(flow)"),
            (["\(flow).\(first)", "up", "extra"], "up takes no value; given: 'extra'"),
            (["\(flow).\(first)", "remove"], "remove takes 1 (goOnAtNext|restart); given: none"),
            (["\(flow).\(first)", "remove", "later"], "goOnAtNext (on at the next step) or restart"),
            (["\(flow).\(first)", "rename", "\(second)"], "\(flow) has a step \(second) already"),
            (["\(flow).\(first)", "rename", "not a name"], "A step's new id is"),
            (["\(flow).\(first)", "timer", "0"], "A step's timer is a number of seconds above 0"),
            (["\(flow).\(first)", "timer", "-5"], "A step's timer is a number of seconds above 0"),
            (["\(flow).\(first)", "skip", "sometimes"], "A skip policy is one of"),
            (["\(flow).\(first)", "add", "noSuchStep", "extraStep"], "like one of the steps"),
            (["\(flow).\(first)", "text", "titel", "x"], "Did you mean 'title'?"),
            (["\(flow).\(first)", "up", "--locale", "pt-BR"], "--locale goes with `text`"),
            (
                ["\(flow).\(first)", "text", "title", "Olá", "--locale", "zz"],
                "zz is not a locale of this draft"
            ),
        ]
        for refusal in refusals {
            let result = try cli.run(["catalog", "edit", path] + refusal.arguments)
            #expect(result.status == 2, "\(refusal.arguments): \(result.stdout)")
            #expect(result.stderr.contains(refusal.says), "\(refusal.arguments): \(result.stderr)")
            #expect(
                FileManager.default.contents(atPath: path) == original, "\(refusal.arguments) wrote the file")
        }
        // Another product's document is refused whole.
        let other = try #require(CommandLineTests.products.first { $0 != executable })
        let otherPath = try Self.exported(try CLI(other), name: "other.json")
        let foreign = try cli.run("catalog", "edit", otherPath, "\(flow).\(first)", "up")
        #expect(foreign.status == 2)
        #expect(foreign.stderr.contains("catalog, not \(product.catalog.app)'s"), "\(foreign.stderr)")
    }

    @Test func anAddedStepIsShapedLikeTheTemplateAndWritesToOutput() throws {
        let executable = "moodtracker"
        let (cli, product, path, original, flow, first, second) = try Start(executable).parts
        let output = cli.folder.appendingPathComponent("out.json").path
        let added = try cli.run(
            "catalog", "edit", path, "\(flow).\(first)", "add", second.rawValue, "anotherOne", "--output",
            output)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(FileManager.default.contents(atPath: path) == original, "--output leaves FILE as it was")
        let document = try Self.read(output)
        let steps = try #require(document.catalog.flow(flow)).steps
        #expect(steps.map(\.id).prefix(2) == [first, StepID("anotherOne")])
        let template = try #require(product.catalog.flow(flow)?.step(second))
        #expect(steps[1].actions == template.actions)
        // A translation set and removed again: the check names what is missing, as `check` does.
        let translated = try cli.run(
            "catalog", "edit", output, "\(flow).\(first)", "text", "title", "Outro título", "--locale",
            "pt-BR")
        #expect(translated.status == 0, "\(translated.stderr)")
        #expect(
            try Self.read(output).catalog.strings.tables[LocaleTag(known: "pt-BR")]?[
                "\(flow).\(first).title"]?.text
                == "Outro título")
    }
}
