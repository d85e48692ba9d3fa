import AccountSync
import TourCodec
import TourCore

#if canImport(Darwin)
    import Foundation
#else
    import FoundationEssentials
#endif

/// The account server over HTTP: through `URLSession` on Apple platforms (the client the iOS apps
/// already have), and elsewhere through the system's libcurl loaded on the first request
/// (`CurlHTTP`), so the device side brings no networking dependency of its own, nothing of NIO,
/// and no start-up cost to a command that does not sync.
///
/// The token is sent as `Authorization: Bearer ...` and kept only in memory.
public struct HTTPSyncTransport: SyncTransport {
    public var server: URL
    /// Nil for the one request that needs none (an install's enrollment).
    private let token: Secret?
    private let timeout: TimeInterval
    private let maximumResponseBytes: Int
    #if canImport(Darwin)
        private let session: URLSession
    #endif

    /// - Parameters:
    ///   - timeout: seconds to wait for an answer before the server counts as unreachable.
    ///   - maximumResponseBytes: the longest answer read; a longer one is refused.
    public init(server: URL, token: Secret?, timeout: TimeInterval = 5, maximumResponseBytes: Int = 32 << 20)
    {
        self.server = server
        self.token = token
        self.timeout = timeout
        self.maximumResponseBytes = maximumResponseBytes
        #if canImport(Darwin)
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = timeout
            configuration.timeoutIntervalForResource = timeout * 2
            configuration.httpAdditionalHeaders = ["Accept": "application/json"]
            session = URLSession(configuration: configuration)
        #endif
    }

    /// Enrolls this install of `app` with the app's (public) enrollment key: its subject and credential.
    public func enroll(app: String, enrollmentKey: String) async throws(SyncError) -> InstallCredential {
        let body: Data
        do { body = Data(try TourValue.members(["enrollmentKey": .string(enrollmentKey)]).jsonUTF8()) } catch
        {
            throw .rejected(status: 0, code: "invalid_request", message: "\(error)")
        }
        // Sent again once with the same key when its answer did not come (a timeout, a 503 that
        // may have committed): the server answers with the install it made, not a second one.
        let key = UUID().uuidString.lowercased()
        do {
            return try await send(
                "POST", "/\(SyncAPI.version)/apps/\(app)/installs", body: body, idempotencyKey: key)
        } catch let error where error.isTransient {
            try? await Task.sleep(for: .seconds(1))
            return try await send(
                "POST", "/\(SyncAPI.version)/apps/\(app)/installs", body: body, idempotencyKey: key)
        }
    }

    public func push(app: String, account: String, _ batch: PushBatch) async throws(SyncError) -> PushAck {
        let body: Data
        do { body = Data(try batch.tourValue.jsonUTF8()) } catch {
            throw .rejected(status: 0, code: "invalid_request", message: "\(error)")
        }
        return try await send(
            "POST", SyncAPI.accountPath(app: app, account: account) + "/push", body: body, content: true)
    }

    public func pull(app: String, account: String) async throws(SyncError) -> AccountRecords {
        try await send("GET", SyncAPI.accountPath(app: app, account: account) + "/flows", body: nil)
    }

    public func budget(app: String, account: String, _ exchange: BudgetExchange) async throws(SyncError)
        -> AccountBudget
    {
        let body: Data
        do { body = Data(try exchange.tourValue.jsonUTF8()) } catch {
            throw .rejected(status: 0, code: "invalid_request", message: "\(error)")
        }
        return try await send("POST", SyncAPI.accountPath(app: app, account: account) + "/budget", body: body)
    }

    public func catalogs(app: String, ifNoneMatch entityTag: String?) async throws(SyncError) -> CatalogPull {
        let (list, headers): (PublishedCatalogs?, [String]) = try await send(
            "GET", "/\(SyncAPI.version)/apps/\(app)/catalogs", body: nil, ifNoneMatch: entityTag)
        let maxAge = CatalogPull.maxAge(
            cacheControl: headers.last { $0.hasPrefix("cache-control:") }.map {
                String($0.dropFirst("cache-control:".count))
            })
        guard let list else { return .unchanged(maxAge: maxAge) }
        return .changed(list, entityTag: list.entityTag, maxAge: maxAge)
    }

    /// Why a token must not be sent to `server`, or nil when it may: only http and https are
    /// spoken, and plain http carries a token in clear text, so it is only for loopback hosts (a
    /// server on this machine, as in development and the tests).
    public static func refusal(toSendTokenTo server: URL) -> String? {
        let scheme = server.scheme?.lowercased() ?? ""
        guard let host = server.host, !host.isEmpty else { return "\(server) names no host" }
        switch scheme {
        case "https": return nil
        case "http" where isLoopback(host): return nil
        case "http":
            let secure = "https://" + server.absoluteString.dropFirst("http://".count)
            return
                """
                refusing to send the account token over plain http to \(host): use \(secure) (plain http is \
                allowed only to this machine: 127.0.0.1, ::1 or localhost)
                """
        default:
            return
                """
                \(server) is not an http or https URL; the account server is reached over https (or http on \
                this machine)
                """
        }
    }

    /// An answer cut off at the cap: refused, whichever client read it.
    static func answerTooLarge(_ limit: Int) -> SyncError {
        .serverFailed(
            status: 0,
            message: "the answer is larger than \(limit) bytes, the most a device reads; it was not used")
    }

    /// 127.0.0.0/8, ::1 and localhost.
    static func isLoopback(_ host: String) -> Bool {
        var host = Substring(host.lowercased())
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    private func send<Answer: TourValueConvertible>(
        _ method: String, _ path: String, body: Data?, content: Bool = false, idempotencyKey: String? = nil
    ) async throws(SyncError) -> Answer {
        guard
            let answer: Answer = try await send(
                method, path, body: body, ifNoneMatch: nil, content: content, idempotencyKey: idempotencyKey
            ).0
        else {
            throw .serverFailed(status: 304, message: "a 304 to a request that was not conditional")
        }
        return answer
    }

    /// The answer, or nil for a 304 to a conditional request (`If-None-Match`), with the answer's
    /// header lines (names lowercased). With `content`, a refusal of what the body carries (400,
    /// 413, 422) is ``SyncError/refusedContent(status:seq:message:)``.
    private func send<Answer: TourValueConvertible>(
        _ method: String, _ path: String, body: Data?, ifNoneMatch entityTag: String?, content: Bool = false,
        idempotencyKey: String? = nil
    ) async throws(SyncError) -> (Answer?, [String]) {
        guard let url = URL(string: path, relativeTo: server) else {
            throw .rejected(
                status: 0, code: "invalid_request", message: "'\(path)' is not a path on \(server)")
        }
        if let refusal = Self.refusal(toSendTokenTo: url) {
            throw .rejected(status: 0, code: "insecure_transport", message: refusal)
        }
        let (status, data, redirect, headers) = try await exchange(
            method, url, body: body, ifNoneMatch: entityTag, idempotencyKey: idempotencyKey)
        if status == 304, entityTag != nil { return (nil, headers) }
        if (300..<400).contains(status) {
            throw .rejected(
                status: status, code: "redirected",
                message:
                    """
                    the server answered with a redirect to \(redirect ?? "another address"), \
                    which is not followed (the token goes only where --server says); \
                    point --server at the new address
                    """
            )
        }
        guard (200..<300).contains(status) else {
            let detail = (try? ErrorBody(jsonUTF8: data))?.error
            if content, [400, 413, 422].contains(status) {
                throw .refusedContent(
                    status: status, seq: detail?.seq, message: detail?.message ?? "no details")
            }
            if (400..<500).contains(status) {
                throw .rejected(
                    status: status, code: detail?.code ?? "http_\(status)",
                    message: detail?.message ?? "no details")
            }
            throw .serverFailed(status: status, message: detail?.message ?? "no details")
        }
        do {
            return (try Answer(jsonUTF8: data), headers)
        } catch {
            throw .serverFailed(status: status, message: "an answer that is not the expected JSON: \(error)")
        }
    }

    /// One request and its answer: the status, the body, where a 3xx points and the header lines.
    private func exchange(
        _ method: String, _ url: URL, body: Data?, ifNoneMatch entityTag: String?, idempotencyKey: String?
    ) async throws(SyncError) -> (Int, Data, String?, [String]) {
        #if canImport(Darwin)
            var request = URLRequest(url: url)
            request.httpMethod = method
            if let token { request.setValue("Bearer \(token.reveal())", forHTTPHeaderField: "Authorization") }
            if let entityTag { request.setValue(entityTag, forHTTPHeaderField: "If-None-Match") }
            if let idempotencyKey { request.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key") }
            if let body {
                request.httpBody = body
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            do {
                let (data, response) = try await session.data(for: request, delegate: NoRedirects.shared)
                guard data.count <= maximumResponseBytes else {
                    throw Self.answerTooLarge(maximumResponseBytes)
                }
                let http = response as? HTTPURLResponse
                let cacheControl =
                    http?.value(forHTTPHeaderField: "Cache-Control").map { ["cache-control: \($0)"] } ?? []
                return (
                    http?.statusCode ?? 0, data, http?.value(forHTTPHeaderField: "Location"), cacheControl
                )
            } catch {
                throw .unreachable(
                    (error as? URLError).map { "\($0.code.rawValue): \($0.localizedDescription)" }
                        ?? "\(error)")
            }
        #else
            var headers =
                ["Accept: application/json"] + (token.map { ["Authorization: Bearer \($0.reveal())"] } ?? [])
            if body != nil { headers.append("Content-Type: application/json") }
            if let entityTag { headers.append("If-None-Match: \(entityTag)") }
            if let idempotencyKey { headers.append("Idempotency-Key: \(idempotencyKey)") }
            let response = try await CurlHTTP.send(
                method: method, url: url.absoluteString, headers: headers, body: body, timeout: timeout,
                maximumResponseBytes: maximumResponseBytes)
            return (response.status, response.body, response.redirect, response.headers)
        #endif
    }

    #if canImport(Darwin)
        /// Answers a redirect with the redirect itself: the token goes only where --server says.
        private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
            static let shared = NoRedirects()
            func urlSession(
                _ session: URLSession, task: URLSessionTask,
                willPerformHTTPRedirection response: HTTPURLResponse,
                newRequest request: URLRequest
            ) async -> URLRequest? { nil }
        }
    #endif
}
