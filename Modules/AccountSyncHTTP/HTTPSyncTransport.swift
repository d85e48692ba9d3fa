import AccountSync

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
    private let token: Secret
    private let timeout: TimeInterval
    #if canImport(Darwin)
        private let session: URLSession
    #endif

    /// - Parameters:
    ///   - timeout: seconds to wait for an answer before the server counts as unreachable.
    public init(server: URL, token: Secret, timeout: TimeInterval = 5) {
        self.server = server
        self.token = token
        self.timeout = timeout
        #if canImport(Darwin)
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = timeout
            configuration.timeoutIntervalForResource = timeout * 2
            configuration.httpAdditionalHeaders = ["Accept": "application/json"]
            session = URLSession(configuration: configuration)
        #endif
    }

    public func push(app: String, account: String, _ batch: PushBatch) async throws(SyncError) -> PushAck {
        let body: Data
        do { body = try Self.encoder.encode(batch) } catch { throw .rejected(status: 0, code: "invalid_request", message: "\(error)") }
        return try await send("POST", SyncAPI.accountPath(app: app, account: account) + "/push", body: body)
    }

    public func pull(app: String, account: String) async throws(SyncError) -> AccountRecords {
        try await send("GET", SyncAPI.accountPath(app: app, account: account) + "/flows", body: nil)
    }

    private func send<Answer: Decodable>(_ method: String, _ path: String, body: Data?) async throws(SyncError)
        -> Answer
    {
        guard let url = URL(string: path, relativeTo: server) else {
            throw .rejected(status: 0, code: "invalid_request", message: "'\(path)' is not a path on \(server)")
        }
        let (status, data) = try await exchange(method, url, body: body)
        guard (200..<300).contains(status) else {
            let detail = (try? JSONDecoder().decode(ErrorBody.self, from: data))?.error
            if (400..<500).contains(status) {
                throw .rejected(
                    status: status, code: detail?.code ?? "http_\(status)", message: detail?.message ?? "no details")
            }
            throw .serverFailed(status: status, message: detail?.message ?? "no details")
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw .serverFailed(status: status, message: "an answer that is not the expected JSON: \(error)")
        }
    }

    /// One request and its answer: the status and the body.
    private func exchange(_ method: String, _ url: URL, body: Data?) async throws(SyncError) -> (Int, Data) {
        #if canImport(Darwin)
            var request = URLRequest(url: url)
            request.httpMethod = method
            request.setValue("Bearer \(token.reveal())", forHTTPHeaderField: "Authorization")
            if let body {
                request.httpBody = body
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            do {
                let (data, response) = try await session.data(for: request)
                return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
            } catch {
                throw .unreachable((error as? URLError).map { "\($0.code.rawValue): \($0.localizedDescription)" } ?? "\(error)")
            }
        #else
            var headers = ["Accept: application/json", "Authorization: Bearer \(token.reveal())"]
            if body != nil { headers.append("Content-Type: application/json") }
            let response = try await CurlHTTP.send(
                method: method, url: url.absoluteString, headers: headers, body: body, timeout: timeout)
            return (response.status, response.body)
        #endif
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
}
