import CatalogDocuments
import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The server's live publications as history for `check --published FILE`: a version published
/// without an app release is in no binary's compiled history, so without it every later document
/// would be told its version skips one.
struct PublishedHistory {
    /// This build's compiled history with the published versions it lacks added.
    let history: CatalogHistory
    /// The published versions, oldest first.
    let versions: [Int]

    /// The newest version known, compiled or published.
    var newest: Int? { history.versions.last }
}

extension CatalogSources {
    /// Reads `path`: the JSON `GET /v1/apps/{app}/catalogs` answers (`{"app", "publications": [...]}`)
    /// for this product's app.
    func published(_ path: String) throws -> PublishedHistory {
        let app = product.catalog.app
        let allowed =
            """
            the JSON the server answers to GET /v1/apps/\(app)/catalogs (an object with `app` and \
            `publications`)
            """
        switch DeviceStore.kind(of: path) {
        case _ where path.isEmpty: throw CLIFailure.usage("--published needs a file: \(allowed)")
        case .missing:
            throw CLIFailure.usage("there is no file '\(path.quotable)'; --published takes \(allowed)")
        case .folder: throw CLIFailure.usage("'\(path.quotable)' is a folder; --published takes \(allowed)")
        case .file: break
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIFailure.usage("'\(path.quotable)' cannot be read (check its permissions)")
        }
        guard data.count <= 64 << 20 else {
            throw CLIFailure.usage("'\(path.quotable)' is \(data.count) bytes; \(allowed) is far smaller")
        }
        let publications: [PublishedCatalog]
        do {
            let wire = try TourValueReader(try TourValue(jsonUTF8: data), as: "published catalogs")
            let listed = try wire.string("app")
            guard listed == app else {
                throw CLIFailure.usage(
                    "'\(path.quotable)' lists \(listed)'s publications, not \(app)'s; give \(allowed)")
            }
            publications = try wire.list("publications")
        } catch let failure as CLIFailure {
            throw failure
        } catch {
            throw CLIFailure.usage("'\(path.quotable)' is not \(allowed): \(error)")
        }
        var recorded = cli.releases
        let compiled = Set(recorded.map(\.file))
        for publication in publications where !compiled.contains("\(publication.version).json") {
            recorded.append(RecordedCatalog(file: "\(publication.version).json", text: publication.document))
        }
        return PublishedHistory(
            history: CatalogHistory(recorded, app: app), versions: Set(publications.map(\.version)).sorted())
    }
}
