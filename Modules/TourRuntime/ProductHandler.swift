import CatalogDocuments
import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The code half of a product: the context its flows read, how its side effects change its domain
/// state, and the requests it performs. Everything else about a product is data in its catalog.
public protocol ProductHandler: Sendable {
    /// The product's side effects as a type (an enum, one case per kind): their kinds and payloads
    /// are the vocabulary the catalog is checked against, and ``apply(_:to:now:)`` matches them
    /// exhaustively, so no effect is silently ignored.
    associatedtype Effect: HandlerEffect = NoEffects
    /// The facts flows read (`hasPhases`, `weeksLived`), computed from domain state and the time.
    func context(domain: [String: TourValue], now: Date) -> TourContext
    /// Writes a side effect's data into the domain state. Runs inside the event's transaction.
    func apply(_ effect: Effect, to domain: inout [String: TourValue], now: Date)
    /// Performs a request gate (a connection attempt) and answers it. Runs after the commit.
    nonisolated(nonsending) func perform(
        request name: String, payload: [String: TourValue], secrets: [String: Secret]
    ) async
        -> GateStatus
    /// Events the product sends by itself after a committed transition, such as Growth reporting
    /// that a pending profile write reached the profile store. Runs after the commit.
    nonisolated(nonsending) func followUps(
        after transition: Transition, domain: [String: TourValue], user: String
    ) async
        -> [TourEvent]
    /// What this code provides to the catalog besides its effects: the context keys
    /// ``context(domain:now:)`` computes and the requests ``perform(request:payload:secrets:)``
    /// performs. ``vocabulary`` adds the effect kinds of ``Effect``.
    var declarations: CatalogDeclarations { get }
    /// The keys ``apply(_:to:now:)`` writes, each with its kind, and the format number stored with
    /// them (``DomainStateVocabulary/none`` for a product that writes none). Every write is held
    /// to it in the event's transaction; state a newer format wrote is refused by name.
    var domainState: DomainStateVocabulary { get }
    /// Domain state stored in an older `format` than ``domainState``'s, as this release reads it:
    /// where a format bump that changed what a key means converts it. Runs on every read of such
    /// state; the first event that writes stores the result with the new format.
    func upgradeDomainState(_ domain: [String: TourValue], from format: Int) -> [String: TourValue]
}

extension ProductHandler {
    /// Nothing declared: every reference of the catalog to context or requests is a problem.
    public var declarations: CatalogDeclarations { CatalogDeclarations() }
    public func context(domain: [String: TourValue], now: Date) -> TourContext { domain }
    /// No conversion: a format bump that only added keys reads the older state as it is.
    public func upgradeDomainState(_ domain: [String: TourValue], from format: Int) -> [String: TourValue] {
        domain
    }

    /// Everything the handler provides to the catalog: ``declarations`` with the effect kinds of
    /// ``Effect`` and the accessibility settings every product reads (``ContextKey/accessibility``,
    /// unless the handler declares a key of the same name itself). The catalog check holds the
    /// catalog's references against it.
    public var vocabulary: CatalogDeclarations {
        var vocabulary = declarations
        vocabulary.effects = Effect.kinds
        let declared = vocabulary.contextKeys
        vocabulary.context += ContextKey.accessibility.filter { !declared.contains($0.name) }
        return vocabulary
    }

    /// Checks an effect the engine filled in against ``Effect``'s kinds, reads it and applies it.
    ///
    /// - Throws: ``EffectError`` naming the effect and key when it does not fit (a catalog that
    ///   passes `check` never sends one); the event's transaction then writes nothing.
    public func apply(checking effect: ProductEffect, to domain: inout [String: TourValue], now: Date)
        throws(EffectError)
    {
        apply(try Effect(EffectPayload(effect, kinds: Effect.kinds)), to: &domain, now: now)
    }
    public nonisolated(nonsending) func perform(
        request name: String, payload: [String: TourValue], secrets: [String: Secret]
    ) async
        -> GateStatus
    {
        .unavailable
    }
    public nonisolated(nonsending) func followUps(
        after transition: Transition, domain: [String: TourValue], user: String
    ) async
        -> [TourEvent]
    {
        []
    }
}

extension ProductHandler where Effect == NoEffects {
    /// A product without side effects has nothing to apply.
    public func apply(_ effect: NoEffects, to domain: inout [String: TourValue], now: Date) {}
}

extension Product {
    /// Every problem of the catalog against what the handler declares (see
    /// ``TourCatalog/problems(declaring:)``).
    public var problems: [CatalogProblem] { catalog.problems(declaring: handler.vocabulary) }

    /// The context an event is reduced with: what the handler computes from the domain state, and
    /// each declared device fact as the app reported it (or its default).
    public func context(domain: [String: TourValue], now: Date, device: [String: TourValue]) -> TourContext {
        var context = handler.context(domain: domain, now: now)
        for key in deviceKeys { context[key.name] = device[key.name] ?? key.defaultValue }
        return context
    }
}

/// A product as the runtime and CLI see it.
public struct Product: Sendable {
    public var catalog: TourCatalog {
        didSet {
            stamp = CatalogFingerprint(catalog, declarations: handler.vocabulary)
            scopes = catalog.scopes
        }
    }
    public var handler: any ProductHandler {
        didSet {
            deviceKeys = handler.vocabulary.deviceKeys
            rememberedDeviceFacts = Set(deviceKeys.filter(\.remembered).map(\.name))
            stamp = CatalogFingerprint(catalog, declarations: handler.vocabulary)
        }
    }
    /// The handler's declared device facts, kept: the context is computed for every event.
    private var deviceKeys: [ContextKey]
    /// The device facts the install remembers once reported (``ContextKey/remembered``).
    /// Kept with ``deviceKeys``: every event reads it.
    public private(set) var rememberedDeviceFacts: Set<String>
    /// The fingerprint of the catalog's document, computed once when first needed.
    private var stamp: CatalogFingerprint
    /// Where each flow's and each domain key's state lives, kept with the catalog: every event and
    /// every read of a session names it.
    public private(set) var scopes: Scopes
    /// The app version a launch reports when none is given.
    public var currentVersion: String
    /// Signals the app raises by itself right after launch (Finite: the Reveal completes).
    public var launchSignals: [String]

    public init(
        catalog: TourCatalog, handler: any ProductHandler, currentVersion: String = "1.0",
        launchSignals: [String] = []
    ) {
        self.catalog = catalog
        self.handler = handler
        self.deviceKeys = handler.vocabulary.deviceKeys
        self.rememberedDeviceFacts = Set(deviceKeys.filter(\.remembered).map(\.name))
        self.stamp = CatalogFingerprint(catalog, declarations: handler.vocabulary)
        self.scopes = catalog.scopes
        self.currentVersion = currentVersion
        self.launchSignals = launchSignals
    }

    public var engine: TourEngine { TourEngine(catalog: catalog, fingerprint: stamp) }

    /// Runs a published document: its catalog, stamped with the fingerprint the server published
    /// it under (the SHA-256 of its text), so runs and journal rows name the same document on
    /// every device and on the server.
    public mutating func use(published catalog: TourCatalog, fingerprint: String) {
        self.catalog = catalog
        stamp = CatalogFingerprint(known: fingerprint)
    }

    /// Shows the catalog's texts in `locale` (``TourCatalog/localized(to:)``). The fingerprint runs
    /// are stamped with stays the catalog's own: a user who changes language continues where they
    /// were, and the journal names the same document.
    public mutating func localize(to locale: LocaleTag) {
        let stamp = self.stamp
        catalog = catalog.localized(to: locale)
        self.stamp = stamp
    }

    /// The catalog as one canonical document, with the vocabulary of the handler it uses.
    public var document: CatalogDocument { CatalogDocument(catalog, declarations: handler.vocabulary) }

    /// The SHA-256 of ``document``'s text (nil if a number in the catalog is not finite).
    public var fingerprint: String? { stamp.value }
}
