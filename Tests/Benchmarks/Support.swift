import Foundation

/// A figure of the run: printed in the table and written to the JSON file.
struct Figure: Codable {
    var section: String
    var name: String
    var value: Double
    var unit: String
    var note: String? = nil
}

final class Report {
    var figures: [Figure] = []

    func add(_ section: String, _ name: String, _ value: Double, _ unit: String, note: String? = nil) {
        figures.append(Figure(section: section, name: name, value: value, unit: unit, note: note))
        let shown = value >= 100 ? String(format: "%.0f", value) : String(format: "%.3g", value)
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
