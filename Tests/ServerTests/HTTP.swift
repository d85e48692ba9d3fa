import AsyncHTTPClient
import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Plain HTTP for the tests that send what no client would (bad JSON, wrong tokens).
enum HTTP {
    struct Answer {
        var status: Int
        var body: Data
        var entityTag: String? = nil
        var retryAfter: String? = nil
        var requestID: String? = nil
        var cacheControl: String? = nil
        /// `/report` read from a replica that had not caught up: how many seconds behind.
        var staleSeconds: String? = nil
        /// `Idempotent-Replayed`: the first answer to the same request, given again.
        var replayed: String? = nil
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    }

    static func get(_ url: URL, token: String? = nil) async throws -> Answer {
        try await send("GET", url, token: token, body: nil)
    }

    static func post(_ url: URL, token: String? = nil, body: Data) async throws -> Answer {
        try await send("POST", url, token: token, body: body)
    }

    static func send(
        _ method: String, _ url: URL, token: String?, body: Data?, headers: [String: String] = [:]
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .init(rawValue: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        // Thirty seconds: a `/report` may wait 5 s for its count and 2 s for a replica, and a
        // machine busy with the whole suite adds to both; a hung exchange still fails.
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return Answer(
            status: Int(response.status.code), body: Data(bytes.readableBytesView),
            entityTag: response.headers.first(name: "ETag"),
            retryAfter: response.headers.first(name: "Retry-After"),
            requestID: response.headers.first(name: "X-Request-ID"),
            cacheControl: response.headers.first(name: "Cache-Control"),
            staleSeconds: response.headers.first(name: "Onboarding-Stale-Seconds"),
            replayed: response.headers.first(name: "Idempotent-Replayed"))
    }

    /// The same, from synchronous code (the health poll while a process starts): the status, or
    /// nil when nothing answered within two seconds.
    static func status(_ url: URL) -> Int? {
        guard let request = try? HTTPClient.Request(url: url.absoluteString) else { return nil }
        guard let response = try? client.execute(request: request, deadline: .now() + .seconds(2)).wait()
        else { return nil }
        return Int(response.status.code)
    }

    /// AsyncHTTPClient (swift-nio), not FoundationNetworking's `URLSession`: a request that gets no
    /// answer must fail at its deadline. On Linux a `URLSession` task can lose its completion (the
    /// completion handler never runs, `data(for:)` never returns; swift-corelibs-foundation's
    /// tracker has several such hangs), and one such request held a whole CI run until its limit.
    /// Every stage here is bounded: connecting, each read, and the whole exchange. Redirects are
    /// followed, as `URLSession` did; the client lives as long as the test process.
    private static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: .init(
            redirectConfiguration: .follow(max: 5, allowCycles: false),
            timeout: .init(connect: .seconds(10), read: .seconds(30))))
}

extension HTTP {
    /// A TCP connection to `port` on this machine, as a socket the caller closes; nil when it
    /// cannot be made. For the tests that speak to a server below HTTP (a connection that sends
    /// nothing, or goes at once).
    static func connectedSocket(port: Int) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socket)
            return nil
        }
        return socket
    }
}
