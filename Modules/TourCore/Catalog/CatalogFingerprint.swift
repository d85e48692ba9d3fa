/// The fingerprint of the catalog document an engine runs (`CatalogDocument.fingerprint()`, in the
/// CatalogDocuments module, which also makes one from a catalog), computed the first time something
/// asks for it and kept: a command that starts, moves or journals
/// no run never pays for writing the document.
public final class CatalogFingerprint: Sendable {
    private let compute: @Sendable () -> String?
    private let cached = Locked<String??>(nil)

    public init(_ compute: @escaping @Sendable () -> String?) { self.compute = compute }

    /// A fingerprint already known (or none).
    public convenience init(known: String?) { self.init { known } }

    public var value: String? {
        if let value = cached.withLock({ $0 }) { return value }
        let value = compute()
        cached.withLock { $0 = .some(value) }
        return value
    }
}
