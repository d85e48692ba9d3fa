import Foundation
import Persistence
import TourCodec
import TourCore
import TourRuntime

/// Coverage, failure messages, and what makes two explored states the same.
extension Explorer {

    func record(_ move: Move, before: Session, after: Session, product: Product) {
        for state in [before.tour, after.tour] {
            if let flow = state.presentingFlow, let step = state[flow: flow].currentStep {
                report.stepsReached.insert("\(flow)/\(step)")
            }
        }
        if let name = move.actionName, let flow = before.tour.presentingFlow,
            let step = before.tour[flow: flow].currentStep
        {
            report.pairsAccepted.insert("\(flow)/\(step)/\(name)")
        }
    }

    func fail(_ path: [Move], _ place: String, _ problem: String) {
        let route = path.isEmpty ? "(fresh install)" : path.map(\.description).joined(separator: " → ")
        report.violations.append(
            "\(subject) · \(place) · path: \(route): '\(path.last?.description ?? "")' \(problem)")
    }

    func where_(_ state: TourState, _ product: Product) -> String {
        guard let flow = state.presentingFlow else { return "no flow showing" }
        return "flow \(flow) · step \(state[flow: flow].currentStep?.rawValue ?? "?")"
    }

    func describe(_ run: FlowState) -> String {
        run.status == .active
            ? "at step \(run.position + 1) (\(run.currentStep?.rawValue ?? "?"))" : run.status.rawValue
    }

    func describe(_ counts: [String: Int]) -> String {
        counts.isEmpty
            ? "none"
            : counts.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: ", ")
    }

    func fileBytes(_ path: String) -> Data {
        ["", "-wal"].reduce(into: Data()) { $0 += FileManager.default.contents(atPath: path + $1) ?? Data() }
    }

    /// Two states are the same when the flows, the domain and the device match, with timers relative
    /// to now, activations as an order, and lists by length up to two (entries repeat without end).
    static func stateKey(_ session: Session, world: World) -> String {
        let now = session.virtualNow ?? start
        var tour = session.tour
        let order = tour.flows.filter { $0.value.status == .active }.sorted {
            $0.value.activation < $1.value.activation
        }.map(\.key)
        func relative(_ date: Date?) -> Date? {
            date.map { Date(timeIntervalSinceReferenceDate: $0.timeIntervalSince(now)) }
        }
        for (id, flow) in tour.flows {
            switch flow {
            case .notStarted(let start):
                tour.flows[id] = start == nil ? nil : .notStarted(pendingStart: relative(start))
            case .active(var run):
                run.deadline = relative(run.deadline)
                run.activation = order.firstIndex(of: id).map { $0 + 1 } ?? 0
                tour.flows[id] = .active(run)
            case .finished:
                break
            }
        }
        // Written through TourValue, whose objects are written with sorted keys: the flows are a
        // dictionary, which JSONEncoder writes in its (per-process, per-history) iteration order,
        // so two equal states could get two keys.
        var flows: [String: TourValue] = [:]
        for (id, flow) in tour.flows { flows[id.rawValue] = flow.tourValue }
        var permissions: [String: TourValue] = [:]
        for (name, status) in world.permissionsBefore { permissions[name] = .string(status) }
        let shape: TourValue = .object([
            "flows": .object(flows), "appVersion": tour.appVersion.map(TourValue.string) ?? .null,
            "domain": .object(session.domain.mapValues(Self.abstract)), "device": .object(session.device),
            "offline": .bool(world.offline), "permissionsBefore": .object(permissions),
            "deviceFacts": .object(world.deviceFacts),
        ])
        return (try? shape.jsonText()) ?? ""
    }

    static func abstract(_ value: TourValue) -> TourValue {
        switch value {
        case .list(let items): .string("list of \(min(items.count, 2))")
        case .object(let object): .object(object.mapValues(abstract))
        default: value
        }
    }
}
