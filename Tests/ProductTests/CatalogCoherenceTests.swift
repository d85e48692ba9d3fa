import Foundation
import Testing
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
            #expect(key.kind.value(value.displayText) != nil, "\(key.name) = \(value) is not \(key.kind.example)")
        }
        for key in declared.deviceKeys { #expect(context[key.name] == key.defaultValue) }
        // Every key the handler computes from a typical state is declared.
        for extra in Set(product.handler.context(domain: [:], now: now).keys).subtracting(declared.contextKeys) {
            Issue.record("\(product.catalog.name) computes '\(extra)' without declaring it")
        }
    }
}
