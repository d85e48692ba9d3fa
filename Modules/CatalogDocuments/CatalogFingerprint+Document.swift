import TourCore

extension CatalogFingerprint {
    /// The fingerprint of `catalog`'s document with what it uses of `declarations`. The same catalog
    /// and declarations built again (a product value made per session, per exploration step) find
    /// the fingerprint already computed in this process.
    public convenience init(_ catalog: TourCatalog, declarations: CatalogDeclarations) {
        self.init { FingerprintMemo.shared.fingerprint(catalog, declarations) }
    }
}

/// The last few fingerprints computed, by catalog and declarations.
private final class FingerprintMemo: Sendable {
    static let shared = FingerprintMemo()
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
