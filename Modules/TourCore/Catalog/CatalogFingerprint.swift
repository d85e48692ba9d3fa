/// The fingerprint of the catalog document an engine runs (``CatalogDocument/fingerprint()``),
/// computed the first time something asks for it and kept: a command that starts, moves or journals
/// no run never pays for writing the document.
public final class CatalogFingerprint: Sendable {
    private let compute: @Sendable () -> String?
    private let cached = Locked<String??>(nil)

    public init(_ compute: @escaping @Sendable () -> String?) { self.compute = compute }

    /// A fingerprint already known (or none).
    public convenience init(known: String?) { self.init { known } }

    /// The fingerprint of `catalog`'s document with what it uses of `declarations`. The same catalog
    /// and declarations built again (a product value made per session, per exploration step) find
    /// the fingerprint already computed in this process.
    public convenience init(_ catalog: TourCatalog, declarations: CatalogDeclarations) {
        self.init { Self.memo.fingerprint(catalog, declarations) }
    }

    public var value: String? {
        if let value = cached.withLock({ $0 }) { return value }
        let value = compute()
        cached.withLock { $0 = .some(value) }
        return value
    }

    /// The last few fingerprints computed, by catalog and declarations.
    private static let memo = Memo()

    private final class Memo: Sendable {
        private let entries = Locked<[(TourCatalog, CatalogDeclarations, String?)]>([])

        func fingerprint(_ catalog: TourCatalog, _ declarations: CatalogDeclarations) -> String? {
            if let known = entries.withLock({ $0.first { $0.0 == catalog && $0.1 == declarations } }) {
                return known.2
            }
            let fingerprint = try? CatalogDocument(catalog, declarations: declarations).fingerprint()
            entries.withLock { entries in
                entries.append((catalog, declarations, fingerprint))
                if entries.count > 16 { entries.removeFirst() }
            }
            return fingerprint
        }
    }
}
