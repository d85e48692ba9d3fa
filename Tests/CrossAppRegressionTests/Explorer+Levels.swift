import Foundation
import Persistence

/// One depth of the walk at a time: alone, or for a large frontier by two workers side by side.
extension Explorer {
    /// A frontier at least this large is explored by two workers side by side.
    static let parallelFrontier = 24

    /// Explores every node of one depth; returns the states first reached there, in the order a
    /// walk of the nodes one after another finds them.
    ///
    /// A large frontier is split in two halves that two workers explore at once (the largest
    /// explorations otherwise ran alone on one core at the end of the suite). Each worker knows the
    /// states of the depths before; the states both halves reach are merged in frontier order, the
    /// first found kept, as one walk keeps them, so the states, transitions and paths are the same
    /// in every run. What the walk alone would have skipped is checked twice: a state reached in
    /// both halves, and a refusal tried on disk by each worker.
    func exploreLevel(_ frontier: [Node]) async throws -> [Node] {
        guard frontier.count >= Self.parallelFrontier else {
            var next: [Node] = []
            for node in frontier {
                let children = try await explore(node)
                if children.isEmpty { report.paths += 1 }
                next += children
                remove(node.store)
                if report.violations.count >= 20 { break }
            }
            return next
        }
        if workers.isEmpty { workers = try (0..<2).map { _ in try Explorer(subject) } }
        let half = (frontier.count + 1) / 2
        let halves = [Array(frontier.indices.prefix(half)), Array(frontier.indices.dropFirst(half))]
        for worker in workers {
            worker.seen = seen
            worker.diskChecked = diskChecked
            worker.report = ExplorationReport(product: report.product, depth: report.depth)
        }
        let explored = try await withThrowingTaskGroup(of: [(Int, [Node])].self) { group in
            for (worker, indices) in zip(workers, halves) {
                group.addTask {
                    try await withTaskExecutorPreference(worker.executor) {
                        var found: [(Int, [Node])] = []
                        for index in indices {
                            found.append((index, try await worker.explore(frontier[index])))
                            if worker.report.violations.count >= 20 { break }
                        }
                        return found
                    }
                }
            }
            return try await group.reduce(into: [(Int, [Node])]()) { $0 += $1 }.sorted { $0.0 < $1.0 }
        }
        for worker in workers {
            report.transitions += worker.report.transitions
            report.refusalsChecked += worker.report.refusalsChecked
            report.refusalsOnDisk += worker.report.refusalsOnDisk
            report.stepsReached.formUnion(worker.report.stepsReached)
            report.pairsAccepted.formUnion(worker.report.pairsAccepted)
            report.violations += worker.report.violations
            diskChecked.formUnion(worker.diskChecked)
        }
        var next: [Node] = []
        for (index, children) in explored {
            var kept = 0
            for child in children {
                if seen.insert(child.key).inserted {
                    next.append(child)
                    kept += 1
                    report.states += 1
                } else {
                    remove(child.store)
                }
            }
            if kept == 0 { report.paths += 1 }
            remove(frontier[index].store)
        }
        return next
    }
}
