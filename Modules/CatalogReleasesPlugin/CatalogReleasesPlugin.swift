import Foundation
import PackagePlugin

/// Gives a product module (`Apps/<Folder>/Onboarding`) `CatalogReleases.recorded`: the text of every
/// catalog document in its `releases/` folder, the catalog's release history, compiled into the
/// product so that `APP check` and the tests hold today's catalog against every version it shipped.
/// A product without the folder gets an empty history. `scripts/record-catalog` writes the files.
/// Its `strings/` folder's translation tables (one `LOCALE.json` each) come in the same way, as
/// `CatalogReleases.stringTables`, and its `publication-keys/` folder's trusted key files as
/// `CatalogReleases.publicationKeys` (Docs/Security.md).
@main
struct CatalogReleasesPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let folder = module.directoryURL
        let files = ["releases", "strings", "publication-keys"].flatMap { name -> [URL] in
            let subfolder = folder.appendingPathComponent(name)
            return ((try? FileManager.default.contentsOfDirectory(atPath: subfolder.path)) ?? [])
                .filter { $0.hasSuffix(".json") }.sorted().map { subfolder.appendingPathComponent($0) }
        }
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("CatalogReleases.swift")
        return [
            .buildCommand(
                displayName:
                    """
                    Compiling \(files.count) recorded catalog releases and string tables into \(target.name)
                    """,
                executable: try context.tool(named: "catalog-releases").url,
                arguments: [output.path] + files.map(\.path), inputFiles: files, outputFiles: [output])
        ]
    }
}
