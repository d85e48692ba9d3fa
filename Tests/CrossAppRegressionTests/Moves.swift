import Foundation
import TourCore
import TourRuntime

/// One thing that can happen at a state: an action on the card (or a free action), a timer
/// running out, the app killed and launched again, a visit or signal, a replay or reset, the
/// network going away or coming back.
enum Move: Hashable, Sendable, CustomStringConvertible {
    case action(String, [String: String], answers: [String: String])
    case timer
    case relaunch(version: String)
    case visit(String)
    case signal(String)
    case replay(FlowID)
    case reset
    case network(offline: Bool)

    var description: String {
        switch self {
        case .action(let name, let parameters, let answers):
            ([name] + parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                + answers.sorted { $0.key < $1.key }.map { "(\($0.key) answered \($0.value))" })
                .joined(separator: " ")
        case .timer: "wait for the timer"
        case .relaunch(let version): "kill and relaunch \(version)"
        case .visit(let place): "visit \(place)"
        case .signal(let name): "signal \(name)"
        case .replay(let flow): "replay \(flow)"
        case .reset: "reset"
        case .network(let offline): offline ? "go offline" : "go online"
        }
    }

    var actionName: String? { if case .action(let name, _, _) = self { name } else { nil } }

    /// Moves from outside the card are limited per path (see ``Budget``); actions and timers are not.
    var budgetKind: String? {
        switch self {
        case .action, .timer: nil
        case .relaunch: "relaunch"
        case .visit, .signal: "trigger"
        case .replay, .reset: "replay or reset"
        case .network: "network"
        }
    }
}

/// How many moves of each outside kind one path may take. Without a bound the independent flows of
/// a product (Carrier Wave's five mini-tours, each visit at each step of each other one) multiply
/// into millions of states; with it every step and pair is still reached, and a path may still
/// kill and relaunch once after its first launch, stack two tours, replay or reset once, and lose and regain
/// the network.
struct Budget: Hashable, Sendable {
    var remaining: [String: Int] = ["relaunch": 2, "trigger": 2, "replay or reset": 1, "network": 2]

    func allows(_ move: Move) -> Bool { move.budgetKind.map { (remaining[$0] ?? 0) > 0 } ?? true }

    func spending(_ move: Move) -> Budget {
        var next = self
        if let kind = move.budgetKind { next.remaining[kind, default: 0] -= 1 }
        return next
    }
}

/// What one product's exploration covered and what it found wrong.
struct ExplorationReport: Sendable {
    var product: String
    var states = 0
    var transitions = 0
    var refusalsChecked = 0
    var refusalsOnDisk = 0
    var paths = 0
    var depth = 0
    var definedSteps: [String] = []
    var definedPairs: [String] = []
    var stepsReached: Set<String> = []
    var pairsAccepted: Set<String> = []
    var violations: [String] = []

    var unreachedSteps: [String] { definedSteps.filter { !stepsReached.contains($0) } }
    var unacceptedPairs: [String] { definedPairs.filter { !pairsAccepted.contains($0) } }

    var summary: String {
        "\(product): \(states) states, \(transitions) transitions, \(paths) paths (depth ≤ \(depth)), "
            + "\(refusalsChecked) refusals (\(refusalsOnDisk) on disk); "
            + "steps \(definedSteps.count - unreachedSteps.count)/\(definedSteps.count), "
            + "(step, action) pairs \(definedPairs.count - unacceptedPairs.count)/\(definedPairs.count)"
    }
}
