/// The fingerprint of the catalog document an engine runs (``CatalogDocument/fingerprint()``),
/// computed the first time something asks for it and kept: a command that starts, moves or journals
/// no run never pays for writing the document.
public final class CatalogFingerprint: Sendable {
    private let compute: @Sendable () -> String?
    private let cached = Locked<String??>(nil)

    public init(_ compute: @escaping @Sendable () -> String?) { self.compute = compute }

    /// A fingerprint already known (or none).
    public convenience init(known: String?) { self.init { known } }

    /// The fingerprint of `catalog`'s document with what it uses of `declarations`.
    public convenience init(_ catalog: TourCatalog, declarations: CatalogDeclarations) {
        self.init { try? CatalogDocument(catalog, declarations: declarations).fingerprint() }
    }

    public var value: String? {
        if let value = cached.withLock({ $0 }) { return value }
        let value = compute()
        cached.withLock { $0 = .some(value) }
        return value
    }
}
