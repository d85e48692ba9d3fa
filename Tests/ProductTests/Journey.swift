import Foundation
import Haptics
import Permissions
import Persistence
import Testing
import TourCodec
import TourCore
import TourRuntime

/// One user going through a product's flows on a real SQLite database with a virtual clock.
/// Every expectation failure names the product, the flow and the step, so a change to a shared
/// module that breaks a product says where.
struct Journey {
    let product: Product
    let session: TourSession
    let database: OnboardingDatabase
    let permissions: StubPermissionProvider
    let haptics = RecordingHaptics()
    let effects = EffectRecorder()

    static let start = Date(timeIntervalSince1970: 1_767_603_600)

    init(
        _ product: Product, user: String = "user", database: OnboardingDatabase? = nil,
        permissions: StubPermissionProvider = StubPermissionProvider()
    ) throws {
        self.product = product
        let database = try database ?? OnboardingDatabase.inMemory()
        self.database = database
        self.permissions = permissions
        let recorder = effects
        session = TourSession(
            product: product, user: user, database: database, haptics: haptics, permissions: permissions,
            time: .virtual(start: Self.start), observe: { recorder.append($0) })
    }

    var app: String { product.catalog.app }

    func launch(_ version: String? = nil) async throws {
        effects.clear()
        haptics.clear()
        try await session.send(.appLaunched(version: version ?? product.currentVersion))
        for signal in product.launchSignals { try await session.send(.signal(signal)) }
    }

    @discardableResult
    func act(_ action: String, _ parameters: [String: String] = [:]) async throws -> [Transition] {
        effects.clear()
        haptics.clear()
        return try await session.send(.actionPerformed(action, parameters: parameters))
    }

    func send(_ event: TourEvent) async throws {
        effects.clear()
        haptics.clear()
        try await session.send(event)
    }

    func wait(_ seconds: Double) async throws {
        effects.clear()
        haptics.clear()
        try await session.advanceClock(by: seconds)
    }

    func snapshot() async throws -> TourSnapshot { try await session.snapshot() }
    func card() async throws -> Card? { try await snapshot().card }
    func state() async throws -> [String: TourValue] { try await snapshot().state }

    func status(_ flow: FlowID) async throws -> FlowStatus? {
        try await snapshot().flows.first { $0.id == flow }?.status
    }

    /// The action is refused, naming the step, and nothing in the database changes.
    @discardableResult
    func refuses(
        _ action: String, _ parameters: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> TourRefusal? {
        let before = try database.journal().count
        let stateBefore = try await snapshot()
        do {
            try await session.send(.actionPerformed(action, parameters: parameters))
            Issue.record(
                "\(app): '\(action)' was accepted at \(where_(stateBefore))", sourceLocation: sourceLocation)
            return nil
        } catch let refusal as TourRefusal {
            #expect(try database.journal().count == before, sourceLocation: sourceLocation)
            #expect(try await snapshot() == stateBefore, sourceLocation: sourceLocation)
            return refusal
        }
    }

    /// Expects the card showing to be `step` of `flow`.
    func expect(
        _ flow: FlowID?, _ step: StepID?, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let snapshot = try await snapshot()
        if snapshot.card?.flow != flow || snapshot.card?.step != step {
            Issue.record(
                """
                \(app) flow \(flow?.rawValue ?? "none") step \(step?.rawValue ?? "none"): expected this \
                card, found \(where_(snapshot))
                """,
                sourceLocation: sourceLocation)
        }
    }

    private func where_(_ snapshot: TourSnapshot) -> String {
        snapshot.card.map { "\(app) flow \($0.flow) step \($0.step)" } ?? "\(app) with no card showing"
    }
}

final class EffectRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [TourEffect] = []
    func append(_ effect: TourEffect) { lock.withLock { storage.append(effect) } }
    func clear() { lock.withLock { storage.removeAll() } }
    var all: [TourEffect] { lock.withLock { storage } }
    var analytics: [String] { all.compactMap { if case .analytics(let a) = $0 { a.name } else { nil } } }
    var celebrations: Int { all.filter { if case .celebration = $0 { true } else { false } }.count }
    var products: [ProductEffect] { all.compactMap { if case .product(let p) = $0 { p } else { nil } } }
}
