import Foundation
import Permissions
import Persistence
import TourCore
import TourRuntime

/// How a move runs: the session a state is opened as (its world's permissions and device facts), and the move
/// performed on it.
extension Explorer {
    func makeSession(
        _ product: Product, database: OnboardingDatabase, world: World, stored: Session,
        answers: [String: String]
    ) -> TourSession {
        // As the CLI does: what the device remembers from earlier answers, over the world's statuses.
        var statuses: [PermissionName: PermissionStatus] = [:]
        for (name, value) in world.permissionsBefore {
            statuses[PermissionName(rawValue: name)] = PermissionStatus(rawValue: value)
        }
        for (key, value) in stored.device where key.hasPrefix("permission.") {
            statuses[PermissionName(rawValue: String(key.dropFirst("permission.".count)))] = value.stringValue
                .flatMap(PermissionStatus.init)
        }
        let answerMap = Dictionary(
            uniqueKeysWithValues: answers.compactMap { name, value in
                PermissionStatus(rawValue: value).map { (PermissionName(rawValue: name), $0) }
            })
        return TourSession(
            product: product, user: user, database: database,
            permissions: StubPermissionProvider(statuses: statuses, answers: answerMap),
            time: .virtual(start: Self.start), deviceFacts: world.deviceFacts)
    }

    func perform(_ move: Move, on session: TourSession, product: Product, stored: Session)
        async throws -> [Transition]
    {
        switch move {
        case .action(let name, let parameters, _):
            return try await session.send(.actionPerformed(name, parameters: parameters))
        case .timer:
            let now = stored.virtualNow ?? Self.start
            let due = product.engine.nextDeadline(in: stored.tour) ?? now
            return try await session.advanceClock(by: max(0, due.timeIntervalSince(now)))
        case .relaunch(let version):
            var transitions = try await session.send(.appLaunched(version: version))
            for signal in product.launchSignals { transitions += try await session.send(.signal(signal)) }
            return transitions
        case .visit(let place): return try await session.send(.featureVisited(place))
        case .signal(let name): return try await session.send(.signal(name))
        case .replay(let flow): return try await session.send(.replayRequested(flow))
        case .reset: return try await session.send(.resetRequested(nil))
        case .network: return []
        }
    }
}
