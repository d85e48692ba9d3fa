import AccountSync
import AccountSyncHTTP
import Foundation
import Hummingbird
import Logging
import NIOCore
import TestThreads
import Testing
import TourCore

/// The device's HTTP client (libcurl through its C shim on Linux) against small real servers that
/// misbehave on purpose: a redirect to another host, an endless answer, a server that never answers.
@Suite("Transport: what the device's client refuses to do", .ownThread)
struct TransportTests {
    /// A Hummingbird server on a free loopback port, running for the length of `body`.
    static func withServer<T: Sendable>(
        host: String = "127.0.0.1", port: Int? = nil, _ routes: (Router<BasicRequestContext>) -> Void,
        _ body: @Sendable (URL) async throws -> T
    ) async throws -> T {
        let router = Router()
        routes(router)
        let port = port ?? ServerProcess.freePort()
        let (started, ready) = AsyncStream<Void>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { _ in ready.yield() }, logger: Self.quiet)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await app.runService()
                return nil
            }
            for await _ in started { break }
            let result = try await body(try #require(URL(string: "http://\(host):\(port)/")))
            group.cancelAll()
            return result
        }
    }

    static let flows = "/v1/apps/finite/accounts/ann/flows"
    static let quiet: Logger = {
        var logger = Logger(label: "transport-tests")
        logger.logLevel = .critical
        return logger
    }()

    @Test(arguments: [
        ("http://example.com:8080", false), ("http://10.0.0.5", false), ("ftp://127.0.0.1", false),
        ("http://127.0.0.1:8080", true), ("http://localhost", true), ("http://[::1]:9", true),
        ("http://127.1.2.3", true), ("https://example.com", true), ("http://127.0.0.1.example.com", false),
    ])
    func aTokenGoesOverPlainHTTPOnlyToThisMachine(server: String, allowed: Bool) async throws {
        let url = try #require(URL(string: server))
        let refusal = HTTPSyncTransport.refusal(toSendTokenTo: url)
        #expect((refusal == nil) == allowed, "\(server): \(refusal ?? "allowed")")
        if !allowed, url.scheme == "http" {
            #expect(refusal?.contains("use https://") == true)
            // The transport itself refuses too, before anything is sent.
            let transport = HTTPSyncTransport(server: url, token: Secret("secret-token"), timeout: 0.5)
            let error = await #expect(throws: SyncError.self) {
                try await transport.pull(app: "finite", account: "ann")
            }
            guard case .rejected(_, "insecure_transport", _) = error else {
                Issue.record("\(String(describing: error))")
                return
            }
        }
    }

    /// A redirect is the answer, never followed: the token does not reach the other host.
    @Test func aRedirectToAnotherHostIsNotFollowed() async throws {
        let hits = Counter()
        try await Self.withServer(
            host: "127.0.0.2",
            { router in
                router.get(RouterPath(Self.flows)) { _, _ in
                    hits.increment()
                    return "{}"
                }
            },
            { other in
                try await Self.withServer(
                    { router in
                        router.get(RouterPath(Self.flows)) { _, _ in
                            Response(
                                status: .found,
                                headers: [.location: other.absoluteString + String(Self.flows.dropFirst())])
                        }
                    },
                    { server in
                        // A long timeout: what is tested is the redirect, and under the whole suite's
                        // load the default's 5 s to connect was once not enough.
                        let transport = HTTPSyncTransport(
                            server: server, token: Secret("secret-token"), timeout: 60)
                        let error = await #expect(throws: SyncError.self) {
                            try await transport.pull(app: "finite", account: "ann")
                        }
                        guard case .rejected(302, "redirected", let message) = error else {
                            Issue.record("\(String(describing: error))")
                            return
                        }
                        #expect(message.contains("127.0.0.2"))
                    })
            })
        #expect(hits.value == 0)
    }

    /// An answer past the cap is cut off and refused, however the server sends it.
    @Test(arguments: [true, false])
    func anAnswerLargerThanTheCapIsRefused(declaresLength: Bool) async throws {
        let megabyte = ByteBuffer(repeating: UInt8(ascii: " "), count: 1 << 20)
        try await Self.withServer(
            { router in
                router.get(RouterPath(Self.flows)) { _, _ in
                    // Two megabytes of JSON whitespace: valid, and too long.
                    let body = ResponseBody { writer in
                        try await writer.write(megabyte)
                        try await writer.write(megabyte)
                        try await writer.write(ByteBuffer(string: "{}"))
                        try await writer.finish(nil)
                    }
                    var headers: HTTPFields = [.contentType: "application/json"]
                    if declaresLength { headers[.contentLength] = "\((2 << 20) + 2)" }
                    return Response(status: .ok, headers: headers, body: body)
                }
            },
            { server in
                let small = HTTPSyncTransport(
                    server: server, token: Secret("secret-token"), timeout: 60, maximumResponseBytes: 1 << 20)
                let error = await #expect(throws: SyncError.self) {
                    try await small.pull(app: "finite", account: "ann")
                }
                #expect("\(String(describing: error))".contains("larger than 1048576 bytes"))
            })
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        try await Self.withServer(
            { router in
                router.get(RouterPath(Self.flows)) { _, _ in
                    try await Task.sleep(for: .seconds(30))
                    return "{}"
                }
            },
            { server in
                let transport = HTTPSyncTransport(server: server, token: Secret("secret-token"), timeout: 0.3)
                let error = await #expect(throws: SyncError.self) {
                    try await transport.pull(app: "finite", account: "ann")
                }
                guard case .unreachable(let reason) = error else {
                    Issue.record("\(String(describing: error))")
                    return
                }
                #expect(
                    reason.lowercased().contains("timeout") || reason.lowercased().contains("timed out"),
                    "\(reason)")
            })
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
