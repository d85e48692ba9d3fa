import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing
import TourFixtures

@testable import OnboardingServer

/// The limit of requests answered at once (`serve --max-requests-in-flight`): past it a request is
/// answered 503 in its connection's pipeline, and the connection kept. A connection holds one place
/// while a wholly read request of it waits for its answer, given back exactly once, whether the
/// answer is written or the connection goes.
@Suite("Requests past the limit")
struct RequestAdmissionTests {
    static let logger = {
        var logger = Logger(label: "admission-tests")
        logger.logLevel = .critical
        return logger
    }()

    /// A connection's pipeline as the server builds it past the HTTP codec: the admission handler,
    /// then what stands for Hummingbird (the parts that reach the end of the pipeline).
    static func connection(_ requests: RequestsInFlight) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: RequestAdmission(requests: requests))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    static func head(_ path: String, method: HTTPRequest.Method = .post, close: Bool = false)
        -> HTTPRequestPart
    {
        var request = HTTPRequest(method: method, scheme: nil, authority: "server", path: path)
        if close { request.headerFields[.connection] = "close" }
        return .head(request)
    }

    static func send(_ channel: EmbeddedChannel, _ path: String, close: Bool = false) throws {
        try channel.writeInbound(head(path, close: close))
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: #"{"device":"d","items":[]}"#)))
        try channel.writeInbound(HTTPRequestPart.end(nil))
    }

    /// What reached the end of the pipeline (Hummingbird's side), and what was written to the client.
    static func passedOn(_ channel: EmbeddedChannel) throws -> [HTTPRequestPart] {
        var parts: [HTTPRequestPart] = []
        while let part = try channel.readInbound(as: HTTPRequestPart.self) { parts.append(part) }
        return parts
    }

    static func written(_ channel: EmbeddedChannel) throws -> [HTTPResponsePart] {
        var parts: [HTTPResponsePart] = []
        while let part = try channel.readOutbound(as: HTTPResponsePart.self) { parts.append(part) }
        return parts
    }

    static func answer(_ channel: EmbeddedChannel, status: HTTPResponse.Status = .ok) throws {
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: status)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
    }

    @Test func pastTheLimitARequestIsAnswered503HereAndTheConnectionKept() throws {
        let requests = RequestsInFlight(limit: 1, logger: Self.logger)
        let first = try Self.connection(requests)
        let second = try Self.connection(requests)
        try Self.send(first, "/v1/apps/growth/accounts/a/push")
        #expect(try Self.passedOn(first).count == 3)
        #expect(requests.current == 1)

        // The second connection's request finds the one place taken.
        try Self.send(second, "/v1/apps/growth/accounts/b/push", close: false)
        #expect(try Self.passedOn(second).isEmpty, "a refused request reached the router")
        let refusal = try Self.written(second)
        guard case .head(let head)? = refusal.first, case .end? = refusal.last else {
            Issue.record("no whole answer: \(refusal)")
            return
        }
        #expect(head.status == .serviceUnavailable)
        #expect(head.headerFields[.retryAfter] == "1")
        #expect(head.headerFields[.contentType] == "application/json")
        #expect(head.headerFields[HTTPField.Name("X-Request-ID")!]?.isEmpty == false)
        #expect(head.headerFields[.connection] == nil)
        let body = refusal.compactMap { part -> String? in
            if case .body(let buffer) = part { String(buffer: buffer) } else { nil }
        }.joined()
        #expect(body.contains(#""code":"overloaded""#))
        #expect(head.headerFields[.contentLength] == String(body.utf8.count))
        #expect(second.isActive, "a refusal closed a connection that did not ask to close")
        #expect(requests.current == 1)

        // The first request answered: its place is given back once, and the second connection's
        // next request is passed on.
        try Self.answer(first)
        _ = try Self.written(first)
        #expect(requests.current == 0)
        try Self.send(second, "/v1/apps/growth/accounts/b/push")
        #expect(try Self.passedOn(second).count == 3)
        #expect(requests.current == 1)
        try Self.answer(second)
        #expect(requests.current == 0)
        _ = try first.finish()
        _ = try second.finish()
        #expect(requests.current == 0)
    }

    @Test func aRefusedRequestThatAskedToCloseClosesItsConnectionOnceItIsRead() throws {
        let requests = RequestsInFlight(limit: 1, logger: Self.logger)
        let holder = try Self.connection(requests)
        try Self.send(holder, "/v1/apps/growth/accounts/a/flows")
        let closing = try Self.connection(requests)
        try closing.writeInbound(Self.head("/v1/apps/growth/accounts/b/push", close: true))
        #expect(closing.isActive, "closed before the request was read, which would reset the connection")
        try closing.writeInbound(HTTPRequestPart.end(nil))
        #expect(!closing.isActive)
        guard case .head(let head)? = try Self.written(closing).first else {
            Issue.record("no answer")
            return
        }
        #expect(head.headerFields[.connection] == "close")
        #expect(requests.current == 1)
    }

    @Test func healthAndReadinessAreNeverRefused() throws {
        let requests = RequestsInFlight(limit: 1, logger: Self.logger)
        let holder = try Self.connection(requests)
        try Self.send(holder, "/v1/apps/growth/accounts/a/push")
        for path in ["/v1/health", "/v1/ready", "/v1/ready?x=1"] {
            let checker = try Self.connection(requests)
            try checker.writeInbound(Self.head(path, method: .get))
            try checker.writeInbound(HTTPRequestPart.end(nil))
            #expect(try Self.passedOn(checker).count == 2, "\(path) was refused")
            #expect(try Self.written(checker).isEmpty)
            try Self.answer(checker)
        }
        #expect(requests.current == 1)
    }

    /// A request pipelined behind one being answered is passed on whatever the limit: a 503 written
    /// here would reach the client before the answer to the request sent before it. The connection
    /// holds one place for both: Hummingbird answers them one at a time.
    @Test func aPipelinedRequestIsNeverAnsweredOutOfOrder() throws {
        let requests = RequestsInFlight(limit: 1, logger: Self.logger)
        let channel = try Self.connection(requests)
        try Self.send(channel, "/v1/apps/growth/accounts/a/push")
        try Self.send(channel, "/v1/apps/growth/accounts/a/push")
        #expect(try Self.passedOn(channel).count == 6)
        #expect(try Self.written(channel).isEmpty)
        #expect(requests.current == 1)
        try Self.answer(channel)
        #expect(requests.current == 1)
        try Self.answer(channel)
        #expect(requests.current == 0)
    }

    /// A request whose body is still arriving holds no place: connections that send a head and
    /// trickle a body cannot take every place. Answered before its body ends (a push shed before
    /// its body is read), it never takes one.
    @Test func aRequestStillArrivingHoldsNoPlace() throws {
        let requests = RequestsInFlight(limit: 1, logger: Self.logger)
        let slow = try Self.connection(requests)
        try slow.writeInbound(Self.head("/v1/apps/growth/accounts/a/push"))
        try slow.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "{")))
        #expect(requests.current == 0)
        let other = try Self.connection(requests)
        try Self.send(other, "/v1/apps/growth/accounts/b/push")
        #expect(try Self.passedOn(other).count == 3, "refused while the only request read was a trickle")
        #expect(requests.current == 1)
        try Self.answer(other)
        // The slow request answered before its end arrives (shed), then its end: no place taken.
        try Self.answer(slow)
        try slow.writeInbound(HTTPRequestPart.end(nil))
        #expect(requests.current == 0)
    }

    /// A connection that goes with a request passed on and unanswered gives its place back.
    @Test func aConnectionThatGoesGivesItsPlaceBack() throws {
        let requests = RequestsInFlight(limit: 4, logger: Self.logger)
        let channels = try (0..<2).map { _ in try Self.connection(requests) }
        for channel in channels { try Self.send(channel, "/v1/apps/growth/accounts/a/push") }
        #expect(requests.current == 2)
        _ = try channels[0].finish()
        #expect(requests.current == 1)
        _ = try channels[1].finish()
        #expect(requests.current == 0)
    }

    /// Random connections sending, being answered and going, in any order: a place is held by each
    /// connection with a request waiting for its answer and by no other, so the places never pass
    /// the limit; a request is refused only when the limit is reached and its connection has none
    /// waiting; and every place is given back at the end.
    @Test(arguments: 0..<40) func placesAreNeverLostOrOverdrawn(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let limit = Int(random.next() % 4) + 1
        let requests = RequestsInFlight(limit: limit, logger: Self.logger)
        var channels: [EmbeddedChannel] = []
        var unanswered: [Int] = []  // per channel: requests passed on and not answered
        for _ in 0..<300 {
            switch random.next() % 4 {
            case 0 where channels.count < 6:
                channels.append(try Self.connection(requests))
                unanswered.append(0)
            case 1 where !channels.isEmpty:
                let index = Int(random.next() % UInt64(channels.count))
                let before = requests.current
                try Self.send(channels[index], "/v1/apps/growth/accounts/a/push")
                if try Self.passedOn(channels[index]).isEmpty {
                    #expect(before >= limit && unanswered[index] == 0, "refused below the limit")
                    _ = try Self.written(channels[index])
                } else {
                    #expect(before < limit || unanswered[index] > 0, "passed on past the limit")
                    unanswered[index] += 1
                }
            case 2 where !channels.isEmpty:
                let index = Int(random.next() % UInt64(channels.count))
                if unanswered[index] > 0 {
                    try Self.answer(channels[index])
                    _ = try Self.written(channels[index])
                    unanswered[index] -= 1
                }
            case 3 where !channels.isEmpty:
                let index = Int(random.next() % UInt64(channels.count))
                _ = try channels.remove(at: index).finish(acceptAlreadyClosed: true)
                unanswered.remove(at: index)
            default: break
            }
            #expect(requests.current == unanswered.filter { $0 > 0 }.count)
            #expect(requests.current <= limit)
        }
        for channel in channels { _ = try channel.finish(acceptAlreadyClosed: true) }
        #expect(requests.current == 0)
    }
}
