import Foundation

/// A figure of the run: printed in the table and written to the JSON file.
struct Figure: Codable {
    var section: String
    var name: String
    var value: Double
    var unit: String
    var note: String? = nil
}

/// A goal of the run: a figure, the bound it must stay under, and whether it did.
struct Goal: Codable {
    var name: String
    var value: Double
    var bound: Double
    var unit: String
    /// value / bound: at most 1 when the goal is met.
    var ratio: Double { value / bound }
    var met: Bool { value <= bound }
}

/// What `--guard` (CI, through scripts/bench-guard) holds the device's ratios to: each goal's
/// bound where the reference run met it, else the figure that run measured (so the next slide is
/// caught while the goal is still being worked towards), and the noise allowed above it: the
/// spread of five guard runs on the quiet reference machine (Docs/PerformanceHistory.md, "The guard").
/// Only ratios of two figures measured in the same run are guarded, never absolute times.
enum Guard {
    struct Line {
        var bound: Double
        var noise: Double
        var limit: Double { bound * (1 + noise) }
    }

    /// From five `scripts/bench-guard` runs of 0.21.0 on swift-packages-b (2026-11-27): the median,
    /// and how far the highest run lay above it, rounded up. Where the goal is met the line is the
    /// goal; the durable event and the rebuild are held at the level they reached (their goals,
    /// 1.2× and 3 s per million, are not met yet).
    static let lines: [(prefix: String, line: Line)] = [
        // 1.27-1.36× in five runs (median 1.33).
        ("durable event, all five", Line(bound: 1.35, noise: 0.08)),
        // Each product alone is noisier: 1.20-1.47× (one product's run is a fifth of the events).
        ("durable event, ", Line(bound: 1.35, noise: 0.15)),
        // 1.42-1.93× in ten runs (the medians of 15 starts each); the goal is 2×.
        ("lockedin status --json cold start / sqlite3 (wall)", Line(bound: 2, noise: 0.10)),
        // 2.88-3.05× in ten runs of 0.21.0; 0.23.0 meets the raised goal (2.46× in the full run,
        // 2.54× in a guard run before the data were ordered too), so the line is the goal.
        ("lockedin status --json / sqlite3 (peak memory)", Line(bound: 2.5, noise: 0.05)),
        // 1.76-2.17× in five runs (median 2.12).
        ("rebuild / raw scan of the same rows", Line(bound: 2.2, noise: 0.10)),
        // 0.28.0, five runs on 2026-11-29: 2.56-4.41 million engine events, median 3.31. The
        // suite's wall held at 32-36 s; the engine's rate, the yardstick, moved 1.5x between runs
        // minutes apart (best of three timings too), so the line is the median with 45% of noise.
        // The durable ratio is the line that catches a slower event path (Performance.md).
        ("cross-app suite wall, in engine events", Line(bound: 3_300_000, noise: 0.45)),
    ]

    static func line(for goal: Goal) -> Line? {
        lines.first { goal.name.hasPrefix($0.prefix) }?.line
    }

    /// The guarded goals missed by more than their noise, each said in one line.
    static func failures(_ goals: [Goal]) -> [String] {
        goals.compactMap { goal in
            guard let line = line(for: goal), goal.value > line.limit else { return nil }
            return
                """
                \(goal.name): \(Report.format(goal.value)) \(goal.unit), over the \
                guard's \(Report.format(line.bound)) \(goal.unit) and \
                its \(Int((line.noise * 100).rounded()))% noise (limit \(Report.format(line.limit)))
                """
        }
    }
}

/// One timing of the cross-app suite by `scripts/bench-suite --out`: a line
/// "products wall-seconds states transitions".
struct SuiteRun {
    var products: Int
    var seconds: Double
    var states: Int
    var secondsPerState: Double { seconds / Double(max(states, 1)) }

    init?(_ line: Substring) {
        let fields = line.split(separator: " ")
        guard fields.count >= 3, let products = Int(fields[0]), let seconds = Double(fields[1]),
            let states = Int(fields[2])
        else { return nil }
        (self.products, self.seconds, self.states) = (products, seconds, states)
    }
}

final class Report {
    var figures: [Figure] = []
    var goals: [Goal] = []

    /// Records a goal (a figure that must be at most `bound`), for the table at the end.
    func goal(_ name: String, _ value: Double, atMost bound: Double, _ unit: String) {
        goals.append(Goal(name: name, value: value, bound: bound, unit: unit))
    }

    /// Every goal with its figure, bound, ratio and whether it is met, in one table.
    func printGoals(smoke: Bool) {
        say("\nGoals")
        if smoke {
            say("  (smoke run: small sizes, and in CI a debug build. The goals are judged on a full")
            say("   `scripts/bench` run; here they only show that every figure is still measured.)")
        }
        say(
            "  " + "goal".padding(toLength: 58, withPad: " ", startingAt: 0) + "figure".leftPad(12)
                + "bound".leftPad(12) + "ratio".leftPad(8) + "  met")
        for goal in goals {
            say(
                "  " + goal.name.padding(toLength: 58, withPad: " ", startingAt: 0)
                    + "\(Self.format(goal.value)) \(goal.unit)".leftPad(12)
                    + "\(Self.format(goal.bound)) \(goal.unit)".leftPad(12)
                    + (goal.bound == 0 ? "-" : String(format: "%.2f", goal.ratio)).leftPad(8)
                    + (goal.met ? "  yes" : "  NO"))
        }
    }

    static func format(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.3g", value)
    }

    func add(_ section: String, _ name: String, _ value: Double, _ unit: String, note: String? = nil) {
        figures.append(Figure(section: section, name: name, value: value, unit: unit, note: note))
        let shown = Self.format(value)
        say(
            "  " + name.padding(toLength: 58, withPad: " ", startingAt: 0) + shown.leftPad(14) + " " + unit
                + (note.map { "  (\($0))" } ?? ""))
    }

    func section(_ title: String) { say("\n\(title)") }
}

/// A line on standard output at once (print buffers when the output is a file).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

extension String {
    func leftPad(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func time(_ body: () async throws -> Void) async rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    return seconds(clock.now - start)
}

/// The middle value (the mean of the two middle ones for an even count); 0 for none.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

func fileSize(_ path: String) -> Int {
    ["", "-wal"].reduce(0) {
        $0 + ((try? FileManager.default.attributesOfItem(atPath: path + $1)[.size] as? Int) ?? 0)
    }
}

let deterministicEncoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .secondsSince1970
    return encoder
}()

func json<T: Encodable>(_ value: T) throws -> String {
    String(decoding: try deterministicEncoder.encode(value), as: UTF8.self)
}
