import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes
import ServerKit
import Synchronization

/// The requests the server answers at once, under its limit (`serve --max-requests-in-flight`,
/// lowered under an overload: ``AdmissionLimit``).
///
/// Under overload, what a request cost before the push queue could shed it (its hop to a task,
/// the router, the middleware, its credential's check, its log line) took the cores the writers
/// needed: the server committed a fraction of what it could, and requests waited for seconds
/// before anything read them. Past the limit a request is answered in its connection's pipeline
/// (``RequestAdmission``), before any of that: a 503 with `Retry-After`, the connection kept.
/// So the requests the server works on at once are bounded, and each is answered within what
/// that many take, whatever arrives.
final class RequestsInFlight: Sendable {
    /// The limit while the server keeps up (`--max-requests-in-flight`).
    let limit: Int
    private let count = Atomic<Int>(0)
    private let admission: Mutex<AdmissionLimit>
    private let refusedSinceLog = Atomic<Int>(0)
    private let lastLog = Atomic<Int64>(0)
    private let logger: Logger

    /// `limit` while the server keeps up, `steady` (at most `limit`) under an overload; nil: `limit`
    /// always.
    init(limit: Int, steady: Int? = nil, logger: Logger) {
        let admission = AdmissionLimit(steady: steady ?? limit, burst: limit)
        self.limit = admission.burst
        self.admission = Mutex(admission)
        self.logger = logger
    }

    /// Whether a request arriving now finds a place, by the limit that applies now.
    func admits(now: NIODeadline = .now()) -> Bool {
        let current = self.current
        let nanoseconds = Int64(truncatingIfNeeded: now.uptimeNanoseconds)
        let limit = admission.withLock { $0.look(count: current, now: nanoseconds) }
        return current < limit
    }

    /// The limit that applied at the last look.
    var currentLimit: Int { admission.withLock { $0.limit } }

    var current: Int { count.load(ordering: .relaxed) }

    /// Takes a place. Whether one is free is read when the request's head arrives, and the place
    /// taken once it is wholly read, so the count may pass the limit by the requests read meanwhile.
    func take() { count.add(1, ordering: .relaxed) }

    func giveBack() { count.subtract(1, ordering: .relaxed) }

    /// Counts a refusal, and logs one line at most every ``logInterval`` with how many there were
    /// (a line per refused request would add a write to every request the server cannot take).
    func refused(at now: Date = Date()) {
        ServerMetrics.requestsRefused.increment()
        let refused = refusedSinceLog.add(1, ordering: .relaxed).newValue
        let second = Int64(now.timeIntervalSince1970)
        let last = lastLog.load(ordering: .relaxed)
        guard second - last >= Self.logInterval,
            lastLog.compareExchange(expected: last, desired: second, ordering: .relaxed).exchanged
        else { return }
        refusedSinceLog.subtract(refused, ordering: .relaxed)
        logger.warning(
            "requests refused: the server is answering its limit of requests at once",
            metadata: [
                "refused": "\(refused)", "limit": "\(currentLimit)", "code": "overloaded",
                "since_seconds": "\(last == 0 ? 0 : second - last)",
            ])
    }

    static let logInterval: Int64 = 10
}

/// In each connection's pipeline, after the HTTP codec: a request that finds the server at its
/// limit is answered 503 here, its body read and dropped, and the connection kept for the next.
///
/// A connection holds at most one place, from the moment a request of it is wholly read until
/// every request of it passed on is answered: Hummingbird answers a connection's requests one at a
/// time, so requests pipelined behind one being answered cost nothing more and are passed on
/// whatever the limit (a 503 written for them here would leave before the answer to the request
/// sent first). A request whose body is still arriving holds no place, so connections that send a
/// head and trickle a body cannot take the places from everyone else. Health and readiness checks
/// are never refused: a balancer must not take a busy server for a dead one.
final class RequestAdmission: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let requests: RequestsInFlight
    /// Requests of this connection passed on and not yet answered.
    private var unanswered = 0
    /// Whether this connection holds a place.
    private var holdsPlace = false
    /// Whether the parts being read belong to a refused request.
    private var refusing = false
    /// Whether the refused request asked to close the connection after its answer.
    private var closeAfterRefusal = false

    init(requests: RequestsInFlight) { self.requests = requests }

    /// Health and readiness checks, with or without a query (read only at the limit).
    static func isExempt(_ path: String?) -> Bool {
        guard let path else { return false }
        let route = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return route == "/v1/health" || route == "/v1/ready"
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let head):
            if unanswered == 0, !requests.admits(), !Self.isExempt(head.path) {
                refusing = true
                requests.refused()
                return refuse(head, context: context)
            }
            unanswered += 1
            context.fireChannelRead(data)
        case .body:
            guard !refusing else { return }
            context.fireChannelRead(data)
        case .end:
            guard !refusing else {
                refusing = false
                if closeAfterRefusal { context.close(promise: nil) }
                return
            }
            // Wholly read and not yet answered: the connection now costs the server a place.
            if unanswered > 0, !holdsPlace {
                holdsPlace = true
                requests.take()
            }
            context.fireChannelRead(data)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), unanswered > 0 {
            unanswered -= 1
            if unanswered == 0, holdsPlace {
                holdsPlace = false
                requests.giveBack()
            }
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if holdsPlace { requests.giveBack() }
        holdsPlace = false
        unanswered = 0
        context.fireChannelInactive()
    }

    private func refuse(_ request: HTTPRequest, context: ChannelHandlerContext) {
        let refusal = APIError.overloaded
        var head = HTTPResponse(status: refusal.status)
        let body = ByteBuffer(bytes: Self.refusalBody)
        head.headerFields[.retryAfter] = refusal.retryAfter.map { String($0) }
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentLength] = String(body.readableBytes)
        head.headerFields[.xRequestID] =
            RequestID.accepting(request.headerFields[.xRequestID]) ?? RequestID.make()
        closeAfterRefusal = request.headerFields[.connection] == "close"
        if closeAfterRefusal { head.headerFields[.connection] = "close" }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// The push queue's answer when it sheds (``APIError/overloaded``), encoded once.
    static let refusalBody = APIError.overloaded.body
}
