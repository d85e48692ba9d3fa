import CatalogDocuments
import Foundation
import Testing
import TourCodec
import TourCore
import TourRuntime

/// The catalog check over every product: a product's catalog refers only to what exists, and its
/// handler provides exactly the context it declares.
@Suite("Every product's catalog is coherent")
struct CatalogCoherenceTests {
    /// Every registered product (every folder under Apps/): a new product gets these checks for free.
    static let products: [Product] = registeredProducts.map {
        $0.make(RunEnvironment(databasePath: "/dev/null", offline: true))
    }

    @Test(arguments: products.map(\.catalog.app))
    func theCatalogHasNoProblems(app: String) throws {
        let product = try #require(Self.products.first { $0.catalog.app == app })
        #expect(product.problems.isEmpty, "\(product.catalog.name): \(product.problems.map(\.description))")
    }

    /// The refusal's quick question, "is this an action name at all?", answers as the list does:
    /// every name and alias yes, their near misses (another case, a letter more or less) as the list.
    @Test(arguments: products.map(\.catalog.app))
    func anActionNameIsKnownExactlyWhenTheListHasIt(app: String) throws {
        let catalog = try #require(Self.products.first { $0.catalog.app == app }).catalog
        let names = catalog.actionNames
        #expect(!names.isEmpty)
        for name in names {
            #expect(catalog.hasActionName(name), "\(name)")
            for near in [name.uppercased(), name + "x", String(name.dropLast()), "", " \(name)"] {
                #expect(catalog.hasActionName(near) == names.contains(near), "\(near)")
            }
        }
    }

    @Test(arguments: products.map(\.catalog.app))
    func theHandlerComputesWhatItDeclares(app: String) throws {
        let product = try #require(Self.products.first { $0.catalog.app == app })
        let declared = product.handler.declarations
        let computed = declared.context.filter { $0.source == .productState }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        // With no state the computed keys have their declared defaults' kinds; device facts their defaults.
        let context = product.context(domain: [:], now: now, device: [:])
        for key in computed {
            let value = try #require(context[key.name], "\(key.name) is declared but not computed")
            #expect(
                key.kind.value(value.displayText) != nil, "\(key.name) = \(value) is not \(key.kind.example)")
        }
        for key in declared.deviceKeys { #expect(context[key.name] == key.defaultValue) }
        // Every key the handler computes from a typical state is declared.
        for extra in Set(product.handler.context(domain: [:], now: now).keys).subtracting(
            declared.contextKeys)
        {
            Issue.record("\(product.catalog.name) computes '\(extra)' without declaring it")
        }
    }

    /// The handler's typed effects cover its declared vocabulary: every declared kind is read and
    /// applied, and a kind or payload key it does not declare fails instead of doing nothing.
    @Test(arguments: products.map(\.catalog.app))
    func theHandlerAppliesEveryKindItDeclaresAndRefusesOthers(app: String) throws {
        let product = try #require(Self.products.first { $0.catalog.app == app })
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func sample(_ kind: ValueKind) -> TourValue {
            switch kind {
            case .text, .any: "x"
            case .number: 3
            case .flag: true
            case .list: ["x"]
            case .object: ["x": 1]
            }
        }
        for kind in product.handler.vocabulary.effects {
            var domain: [String: TourValue] = [:]
            let payload = kind.payload.mapValues { sample($0.kind) }
            #expect(throws: Never.self, "\(app) \(kind.name)") {
                try product.handler.apply(
                    checking: ProductEffect(name: kind.name, payload: payload), to: &domain, now: now)
            }
            if let key = kind.payload.keys.sorted().first {
                var misspelt = payload
                misspelt[key + "x"] = misspelt.removeValue(forKey: key)
                #expect(throws: EffectError.self) {
                    try product.handler.apply(
                        checking: ProductEffect(name: kind.name, payload: misspelt), to: &domain, now: now)
                }
            }
        }
        var domain: [String: TourValue] = [:]
        #expect(throws: EffectError.self) {
            try product.handler.apply(
                checking: ProductEffect(name: "noSuchEffect", payload: [:]), to: &domain, now: now)
        }
        #expect(domain.isEmpty)
    }

    /// Every product's catalog, as one canonical document, reads back into an equal catalog.
    @Test(arguments: products.map(\.catalog.app))
    func theCatalogDocumentRoundTrips(app: String) throws {
        let product = try #require(Self.products.first { $0.catalog.app == app })
        let document = CatalogDocument(product.catalog, declarations: product.handler.vocabulary)
        let text = try document.text()
        let read = try CatalogDocument(text: text)
        #expect(read.catalog == product.catalog)
        #expect(try read.text() == text)
        // The vocabulary it carries covers the catalog: the document checks clean against itself.
        #expect(read.catalog.problems(declaring: read.vocabulary).isEmpty)
    }
}
