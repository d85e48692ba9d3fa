import AccountSync
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import OnboardingServer
import ServerSyncAPI
import TourCodec

/// Installs without sign-in: `count` installs enroll through the server (sixteen at a
/// time, as a launch day's first opens come), then push at a user's pace as installs.
extension ServerLoad {
    static let enrollmentKey = "load-enroll-benchmark-key"

    struct Enrollments {
        var subjects: [String]
        var perSecond: Double
        var p50: Double
        var p99: Double
        var failures: Int
    }

    /// Accepts the bench app's enrollment key, then enrolls `count` installs; their subjects and timings.
    func enroll(_ count: Int) async throws -> Enrollments {
        try await withStore(connections: 1) { store in
            var logger = Logger(label: "enrollment")
            logger.logLevel = .error
            try await EnrollmentStore(client: store.client, logger: logger).add(
                app: "load", key: Self.enrollmentKey, by: .commandLine(), at: Date().timeIntervalSince1970)
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { _ = client.shutdown() as EventLoopFuture<Void> }
        let url = server.appendingPathComponent("v1/apps/load/installs").absoluteString
        let body = try TourValue.members(["enrollmentKey": .string(Self.enrollmentKey)]).jsonUTF8()
        let started = ContinuousClock.now
        let results = try await withThrowingTaskGroup(of: [(String?, Double)].self) { group in
            let lanes = 16
            for lane in 0..<lanes {
                group.addTask {
                    var done: [(String?, Double)] = []
                    for _ in stride(from: lane, to: count, by: lanes) {
                        var request = HTTPClientRequest(url: url)
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: "application/json")
                        request.body = .bytes(ByteBuffer(bytes: body))
                        let sent = ContinuousClock.now
                        let response = try await client.execute(request, timeout: .seconds(10))
                        let bytes = try await response.body.collect(upTo: 1 << 16)
                        let took = ContinuousClock.now - sent
                        let seconds =
                            Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
                        let subject =
                            response.status == .created
                            ? (try? TourValue(jsonUTF8: Array(bytes.readableBytesView)))?.objectValue?[
                                "subject"]?.stringValue : nil
                        done.append((subject, seconds))
                    }
                    return done
                }
            }
            var all: [(String?, Double)] = []
            for try await lane in group { all += lane }
            return all
        }
        let elapsed = ContinuousClock.now - started
        let total = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let latencies = results.map(\.1).sorted()
        let subjects = results.compactMap(\.0)
        return Enrollments(
            subjects: subjects, perSecond: Double(subjects.count) / total,
            p50: percentile(latencies, 0.5) * 1000,
            p99: percentile(latencies, 0.99) * 1000, failures: results.count - subjects.count)
    }

    /// The enrolled installs pushing their flows, as installs (install credentials on their subjects).
    func pushAsInstalls(_ subjects: [String], run: String, pace: Double?) async throws -> Figures {
        let runs = try subjects.enumerated().map { index, subject in
            let device = "\(run)-i\(index)"
            return DeviceRun(
                app: "load", account: subject, device: device,
                items: try Self.items(Journey.all[index % Journey.all.count], device: device))
        }
        return try await push(runs, pace: pace)
    }
}
