import TourCodec
import TourCore

/// What a catalog's conditions can see of the device: which device facts they read, the values
/// that change what they decide, and whether a condition can hold at all. The explorer walks the
/// variants; the check reports a step or trigger that no value makes true (never shown).
public enum ContextReach {
    /// One device fact a condition reads, with its values that decide differently: a flag both
    /// ways; a number at each threshold an `atLeast` names and one below it, within its bounds.
    /// The declared default comes first.
    public struct Variable: Sendable, Equatable {
        public var key: String
        public var values: [TourValue]
    }

    /// The device facts `catalog`'s conditions read (steps' inclusion and targets, triggers, action
    /// preconditions), each with its deciding values, by name.
    public static func deviceVariables(of catalog: TourCatalog, declarations: CatalogDeclarations)
        -> [Variable]
    {
        var conditions: [Condition] = []
        for flow in catalog.flows {
            conditions += flow.triggers.map(\.when)
            for step in flow.steps {
                conditions.append(step.includedWhen)
                if let anchor = step.content.anchor { conditions.append(anchor.availableWhen) }
            }
        }
        return variables(in: conditions, declarations: declarations)
    }

    /// Whether some value of every device fact `condition` reads, and any state of everything else
    /// it reads (the product's state, the flows, versions), makes it true. Conservative: parts it
    /// cannot relate count as free, so `false` means never.
    public static func canHold(_ condition: Condition, declarations: CatalogDeclarations) -> Bool {
        let variables = variables(in: [condition], declarations: declarations)
        var opaque: [String] = []
        collectOpaque(condition, declarations: declarations, into: &opaque)
        let combinations = variables.reduce(1) { $0 * $1.values.count } << min(opaque.count, 20)
        guard combinations <= 1 << 14 else { return true }
        for choice in 0..<combinations {
            var rest = choice
            var device: [String: TourValue] = [:]
            for variable in variables {
                device[variable.key] = variable.values[rest % variable.values.count]
                rest /= variable.values.count
            }
            var free: [String: Bool] = [:]
            for (index, atom) in opaque.enumerated() { free[atom] = (rest >> index) & 1 == 1 }
            if holds(condition, device: device, free: free) { return true }
        }
        return false
    }

    static func variables(in conditions: [Condition], declarations: CatalogDeclarations) -> [Variable] {
        var thresholds: [String: Set<Int>] = [:]
        var flags: Set<String> = []
        func visit(_ condition: Condition) {
            switch condition {
            case .flag(let key) where declarations.contextKey(key)?.source == .device: flags.insert(key)
            case .atLeast(let key, let minimum) where declarations.contextKey(key)?.source == .device:
                thresholds[key, default: []].formUnion([minimum, minimum - 1])
            case .not(let inner): visit(inner)
            case .all(let parts), .any(let parts): parts.forEach(visit)
            default: break
            }
        }
        conditions.forEach(visit)
        var result: [Variable] = []
        for key in flags.union(thresholds.keys).sorted() {
            guard let declared = declarations.contextKey(key) else { continue }
            var values = [declared.defaultValue]
            switch declared.kind {
            case .flag:
                values.append(.bool(!(declared.defaultValue.boolValue ?? false)))
            case .number:
                for number in (thresholds[key] ?? []).sorted() where declared.range?.contains(number) ?? true
                {
                    values.append(.int(number))
                }
                if let range = declared.range { values += [.int(range.lowerBound), .int(range.upperBound)] }
            case .text:
                break
            }
            var unique: [TourValue] = []
            for value in values where !unique.contains(value) { unique.append(value) }
            result.append(Variable(key: key, values: unique))
        }
        return result
    }

    /// The parts of `condition` that are not device facts, each a free yes or no.
    static func collectOpaque(
        _ condition: Condition, declarations: CatalogDeclarations, into atoms: inout [String]
    ) {
        switch condition {
        case .always, .never: break
        case .flag(let key) where declarations.contextKey(key)?.source == .device: break
        case .atLeast(let key, _) where declarations.contextKey(key)?.source == .device: break
        case .not(let inner): collectOpaque(inner, declarations: declarations, into: &atoms)
        case .all(let parts), .any(let parts):
            for part in parts { collectOpaque(part, declarations: declarations, into: &atoms) }
        default:
            let atom = String(describing: condition)
            if !atoms.contains(atom) { atoms.append(atom) }
        }
    }

    static func holds(_ condition: Condition, device: [String: TourValue], free: [String: Bool]) -> Bool {
        switch condition {
        case .always: true
        case .never: false
        case .flag(let key) where device[key] != nil: device[key]?.boolValue == true
        case .atLeast(let key, let minimum) where device[key] != nil:
            (device[key]?.intValue ?? .min) >= minimum
        case .not(let inner): !holds(inner, device: device, free: free)
        case .all(let parts): parts.allSatisfy { holds($0, device: device, free: free) }
        case .any(let parts): parts.contains { holds($0, device: device, free: free) }
        default: free[String(describing: condition)] ?? true
        }
    }
}
