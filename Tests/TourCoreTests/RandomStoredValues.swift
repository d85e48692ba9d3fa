import Foundation
import Testing
import TourCodec
import TourCore
import TourFixtures

/// Random values of the stored forms, from the shared SplitMix64 (`TourFixtures`).
extension SplitMix64 {
    /// Text with the characters JSON escapes, slashes, non-ASCII and emoji.
    mutating func text() -> String {
        let pieces = [
            "", "a", "next", "Week 1", "/", "\\", "\"", "\n", "\t", "\r", "\u{8}", "\u{c}", "\u{1}", "\u{1f}",
            "\u{7f}",
            "é", "日本", "😀", "‹redacted›", "{name}", "a/b", " ",
        ]
        return (0..<Int.random(in: 0...4, using: &self)).map { _ in pick(pieces) }.joined()
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<6, using: &self) {
        case 0: return Double(Int.random(in: -1_000...1_000, using: &self))
        case 1: return Double.random(in: -1...1, using: &self)
        case 2: return 1_767_603_600 + Double(Int.random(in: 0..<1_000, using: &self)) / 4
        case 3: return pick([1e20, 1e-7, 2.5e-5, 1e16, 1e15, 123456789012345680.0, 0.1, 1.0 / 3])
        case 4: return Double(bitPattern: next() & 0x7FEF_FFFF_FFFF_FFFF)
        default: return Double.random(in: -1e9...1e9, using: &self)
        }
    }

    mutating func value(depth: Int) -> TourValue {
        switch Int.random(in: 0..<(depth > 0 ? 7 : 5), using: &self) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &self))
        case 2:
            return .int(pick([0, 1, -1, Int.max, Int.min, Int.random(in: -100_000...100_000, using: &self)]))
        case 3: return .double(double())
        case 4: return .string(text())
        case 5: return .list((0..<Int.random(in: 0...4, using: &self)).map { _ in value(depth: depth - 1) })
        default:
            var object: [String: TourValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &self) { object[text()] = value(depth: depth - 1) }
            return .object(object)
        }
    }

    mutating func context() -> [String: TourValue] {
        var object: [String: TourValue] = [:]
        for _ in 0..<Int.random(in: 0...4, using: &self) { object[text()] = value(depth: 1) }
        return object
    }

    mutating func maybe<T>(_ make: (inout SplitMix64) -> T) -> T? {
        Bool.random(using: &self) ? make(&self) : nil
    }

    mutating func flow() -> FlowID {
        FlowID(rawValue: pick(["walkthrough", "onboarding", "app_tour", "w/x", "é"]))
    }
    mutating func step() -> StepID { StepID(rawValue: pick(["welcome", "markWeek", "activation", "s\"1"])) }
    mutating func version() -> String? { maybe { $0.pick(["1.0", "2.5", "2.5.1"]) } }

    mutating func record() -> FlowRecord {
        FlowRecord(Bool.random(using: &self) ? .completed : .skipped, version: version())
    }

    mutating func flowState() -> FlowState {
        switch Int.random(in: 0..<3, using: &self) {
        case 0: return .notStarted(pendingStart: maybe { Date(timeIntervalSince1970: $0.double()) })
        case 1: return .finished(record())
        default:
            let plan = (0..<Int.random(in: 1...5, using: &self)).map { _ in step() }
            return .active(
                FlowRun(
                    plan: plan, position: Int.random(in: 0..<plan.count, using: &self),
                    fields: context(),
                    gates: Bool.random(using: &self) ? ["screenTime": .granted, "x": .denied] : [:],
                    performed: Bool.random(using: &self) ? ["longPressWeek"] : [],
                    deadline: maybe { Date(timeIntervalSince1970: $0.double()) },
                    activation: Int.random(in: 0...9, using: &self),
                    catalogVersion: Int.random(in: 1...3, using: &self),
                    replayOf: maybe {
                        $0.maybe { $0.record() }.map(FlowRecord.Before.finished) ?? .notStarted
                    }))
        }
    }

    mutating func accountRecord() -> AccountFlowRecord {
        AccountFlowRecord(
            epoch: Int.random(in: 0...3, using: &self), standing: pick(AccountFlowRecord.Standing.allCases),
            version: version(), at: Int64.random(in: 0...2_000_000_000_000, using: &self), device: text())
    }

    mutating func event() -> TourEvent {
        switch Int.random(in: 0..<10, using: &self) {
        case 0: return .appLaunched(version: version())
        case 1: return .signal(text())
        case 2: return .featureVisited(text())
        case 3: return .actionPerformed(text(), parameters: [text(): text(), "password": "‹redacted›"])
        case 4: return .gateAnswered(text(), pick(GateStatus.allCases))
        case 5: return .clockAdvanced
        case 6: return .domainEvent(text(), payload: context())
        case 7: return .replayRequested(maybe { $0.flow() })
        case 8: return .resetRequested(maybe { $0.flow() })
        default: return .accountRecordLearned(flow(), accountRecord())
        }
    }

    mutating func effects() -> [TourEffect] {
        (0..<Int.random(in: 0...4, using: &self)).map { _ in
            switch Int.random(in: 0..<9, using: &self) {
            case 0: return .haptic(pick(HapticFeedback.allCases))
            case 1: return .celebration(flow: flow(), step: step())
            case 2: return .analytics(AnalyticsEvent(name: text(), properties: context()))
            case 3: return .checkPermission(gate: text(), PermissionName(rawValue: text()))
            case 4: return .requestPermission(gate: text(), PermissionName(rawValue: text()))
            case 5: return .request(gate: text(), name: text(), payload: context(), secrets: [:])
            case 6: return .product(ProductEffect(name: text(), payload: context()))
            case 7: return .presented(flow())
            default: return .dismissed(flow())
            }
        }
    }

    mutating func facts() -> [TourFact] {
        (0..<Int.random(in: 0...4, using: &self)).map { _ in
            switch Int.random(in: 0..<7, using: &self) {
            case 0:
                return .flowStarted(
                    flow: flow(), plan: [step(), step()], catalogVersion: Int.random(in: 1...3, using: &self),
                    replay: Bool.random(using: &self))
            case 1:
                return .stepEntered(flow: flow(), step: step(), index: Int.random(in: 1...9, using: &self))
            case 2: return .stepCompleted(flow: flow(), step: step())
            case 3:
                return .gateAnswered(
                    flow: flow(), step: step(), gate: text(), answer: pick(GateStatus.allCases))
            case 4:
                return .flowEnded(
                    flow: flow(), ending: pick(TourFact.Ending.allCases), recorded: pick(FlowStatus.allCases),
                    version: version())
            case 5: return .flowReset(flow: flow())
            default:
                return .runMigrated(
                    flow: flow(), fromVersion: 1, toVersion: 2, fromStep: maybe { $0.step() },
                    toStep: maybe { $0.step() },
                    plan: [step()], outcome: pick([.moved, .restarted, .finished, .dropped]),
                    undeclared: Bool.random(using: &self))
            }
        }
    }
}
