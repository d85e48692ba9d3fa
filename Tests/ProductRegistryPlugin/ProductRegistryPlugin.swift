import Foundation
import PackagePlugin

/// Gives a test target `registeredProducts`: the `registration` of every product module (a target
/// under `Apps/` named `<Folder>Onboarding`) it depends on. `Package.swift` makes each test target
/// depend on every folder under `Apps/`, so a new product is registered by existing alone.
@main
struct ProductRegistryPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let modules = target.dependencies.compactMap { dependency -> SourceModuleTarget? in
            guard case .target(let target) = dependency else { return nil }
            return target as? SourceModuleTarget
        }.filter {
            $0.kind == .generic && $0.name.hasSuffix("Onboarding")
                && $0.directoryURL.path.contains("/Apps/")
        }.map(\.name).sorted()
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("RegisteredProducts.swift")
        return [
            .buildCommand(
                displayName: "Registering \(modules.count) products for \(target.name)",
                executable: try context.tool(named: "product-registry").url,
                arguments: [output.path] + modules, inputFiles: [], outputFiles: [output])
        ]
    }
}
