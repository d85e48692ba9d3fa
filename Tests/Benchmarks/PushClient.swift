import AccountSync
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import OnboardingServer
import ServerSyncAPI
import ServerTokens
import TourCodec

/// The load generator's HTTP client: one keep-alive connection per simulated device, driven
/// entirely by NIO callbacks on the event loop that owns the connection.
///
/// Why not AsyncHTTPClient: the load generator runs on the same two cores as the server and
/// PostgreSQL, so whatever it spends is taken from what it measures. Through AsyncHTTPClient it
/// spent about a quarter of the machine at 1,000 pushes a second (`perf` under `scripts/bench
/// --sections 5`: its request state machines, connection pool and task hops), and a push's latency
/// included the wait for a Swift task to be scheduled after its answer had arrived. Here each
/// device's requests are encoded before the clock starts, a request is written in one call, and its
/// latency is read on the event loop that reads the answer, the moment the answer is complete.
///
/// What is timed is the push: from writing the request to having the whole answer. A device has at
/// most one push in flight, as an app does; with a pace, a push whose slot comes while the last one
/// is unanswered is sent when that answer arrives. That wait, and any delay of the load generator's
/// own timers, is not in the latency (as before); it is measured apart, as each push's lag behind
/// its slot, so that a server too slow to keep a device's pace shows there. Slots that came due
/// before the end but were never sent count as offered and not accepted.
final class PushDevice: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    struct Outcome: Sendable {
        var latencies: [Double] = []
        /// Paced: how long after its slot each push went out (waiting for the device's last answer,
        /// or for the load generator's timer), in seconds.
        var lags: [Double] = []
        /// When each push was sent (the loop's clock, in seconds), beside `latencies`.
        var sent: [Double] = []
        var accepted = 0
        var failures = 0
        /// Latencies of the accepted pushes only, and how many were shed (503).
        var acceptedLatencies: [Double] = []
        var shed = 0
        var offered = 0
    }

    /// Encodes the device's next request (its head and body).
    typealias Encoder = @Sendable (inout ServerLoad.DeviceRun) throws -> (HTTPRequestHead, ByteBuffer)

    // Everything below is touched only on the connection's event loop.
    private var run: ServerLoad.DeviceRun
    private let encode: Encoder
    private var prepared: [(HTTPRequestHead, ByteBuffer)]
    private var pace: TimeAmount?
    private var deadline = NIODeadline.distantFuture
    private var slot = NIODeadline.distantPast
    private var sentAt: NIODeadline?
    /// Fails the run when a push has no answer in 30 s, as the client before did.
    private var timeout: Scheduled<Void>?
    private var status: HTTPResponseStatus?
    private var outcome = Outcome()
    private var context: ChannelHandlerContext?
    private var finished = false
    private let done: EventLoopPromise<Outcome>

    init(run: ServerLoad.DeviceRun, prepare count: Int, encode: @escaping Encoder, on loop: any EventLoop)
        throws
    {
        var run = run
        self.prepared = try (0..<count).map { _ in try encode(&run) }.reversed()
        self.run = run
        self.encode = encode
        self.done = loop.makePromise()
    }

    var outcomeFuture: EventLoopFuture<Outcome> { done.futureResult }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    /// Starts pushing (on the connection's loop): the first push at `first`, then one every `pace`
    /// (or, without one, each as soon as the last is answered) until `deadline`.
    func start(first: NIODeadline, pace: TimeAmount?, deadline: NIODeadline) {
        self.pace = pace
        self.deadline = deadline
        slot = first
        wait()
    }

    private func wait() {
        guard let context else { return finish() }
        let now = NIODeadline.now()
        if now >= deadline || slot >= deadline {
            // Slots that came due before the end while the device still waited for an answer.
            if let pace {
                while slot < deadline {
                    outcome.offered += 1
                    slot = slot + pace
                }
            }
            return finish()
        }
        if slot <= now { return send() }
        context.eventLoop.scheduleTask(deadline: slot) { self.send() }
    }

    private func send() {
        guard let context else { return finish() }
        let request: (HTTPRequestHead, ByteBuffer)
        do { request = try prepared.popLast() ?? encode(&run) } catch { return fail(error) }
        outcome.offered += 1
        status = nil
        let now = NIODeadline.now()
        if pace != nil { outcome.lags.append(Double((now - slot).nanoseconds) / 1e9) }
        sentAt = now
        let device = run.device
        timeout = context.eventLoop.scheduleTask(in: .seconds(30)) {
            self.fail(ServerLoadError("device \(device): no answer to a push within 30 s"))
        }
        context.write(wrapOutboundOut(.head(request.0)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(request.1))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): status = head.status
        case .body: break
        case .end:
            guard let sentAt else { return }
            let now = NIODeadline.now()
            timeout?.cancel()
            outcome.latencies.append(Double((now - sentAt).nanoseconds) / 1e9)
            outcome.sent.append(Double(sentAt.uptimeNanoseconds) / 1e9)
            if status == .ok {
                outcome.accepted += 1
                outcome.acceptedLatencies.append(Double((now - sentAt).nanoseconds) / 1e9)
            } else {
                outcome.failures += 1
                if status == .serviceUnavailable { outcome.shed += 1 }
            }
            self.sentAt = nil
            if let pace {
                slot = slot + pace
            } else if status == .serviceUnavailable {
                // Back to back, a shed push's device waits its Retry-After (a second), drawn from
                // half to one and a half as devices do, so a fleet shed together does not come back
                // together.
                slot = now + .nanoseconds(Int64(Double.random(in: 0.5...1.5) * 1e9))
            } else {
                slot = now
            }
            wait()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { fail(error) }

    /// A connection closed before the device is done fails the measurement: a device that went
    /// quiet would only lower the load offered.
    func channelInactive(context: ChannelHandlerContext) {
        self.context = nil
        fail(ServerLoadError("the server closed device \(run.device)'s connection"))
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        done.succeed(outcome)
    }

    private func fail(_ error: any Error) {
        guard !finished else { return }
        finished = true
        done.fail(error)
    }
}

extension ServerLoad {
    /// `runs` pushing through the server for `duration` on ``PushDevice`` connections; see
    /// `throughServer`.
    func push(_ runs: [DeviceRun], pace: Double?) async throws -> Figures {
        guard let host = server.host, let port = server.port else {
            throw ServerLoadError("no host and port in \(server)")
        }
        let group = MultiThreadedEventLoopGroup.singleton
        let signer = signer
        let expires = Int64(Date().timeIntervalSince1970) + 3600
        // Requests are encoded before the clock starts: all a paced device sends, or the first 16 of
        // a device pushing back to back (it encodes the rest as it goes).
        let count = pace.map { Int((duration / $0).rounded(.up)) + 1 } ?? 16
        // Each device opens its connection before the clock starts, as an app that pushes every
        // second keeps one open: what is timed is the push, not a thousand TCP handshakes at once.
        var devices: [(PushDevice, any Channel)] = []
        defer { for (_, channel) in devices { channel.close(promise: nil) } }
        for run in runs {
            let token = await signer.sign(
                TokenClaims(
                    subject: run.account, scope: Installs.isInstall(run.account) ? .install : .account,
                    app: run.app, expires: expires))
            let path = SyncAPI.accountPath(app: run.app, account: run.account) + "/push"
            let encode: PushDevice.Encoder = { run in
                let body = try PushBatch(device: run.device, items: [run.item()]).tourValue.jsonUTF8()
                var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path)
                head.headers.add(name: "Host", value: "\(host):\(port)")
                head.headers.add(name: "Authorization", value: "Bearer \(token)")
                head.headers.add(name: "Content-Type", value: "application/json")
                head.headers.add(name: "Content-Length", value: String(body.count))
                return (head, ByteBuffer(bytes: body))
            }
            let loop = group.next()
            let device = try PushDevice(run: run, prepare: count, encode: encode, on: loop)
            let channel = try await ClientBootstrap(group: loop)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(device)
                    }
                }
                .connect(host: host, port: port).get()
            devices.append((device, channel))
        }
        let started = NIODeadline.now()
        let deadline = started + .nanoseconds(Int64(duration * 1e9))
        let paceAmount = pace.map { TimeAmount.nanoseconds(Int64($0 * 1e9)) }
        for (device, channel) in devices {
            let first = started + .nanoseconds(Int64((pace.map { Double.random(in: 0..<$0) } ?? 0) * 1e9))
            channel.eventLoop.execute { device.start(first: first, pace: paceAmount, deadline: deadline) }
        }
        var outcomes: [PushDevice.Outcome] = []
        for (device, _) in devices { outcomes.append(try await device.outcomeFuture.get()) }
        let elapsed = Double((NIODeadline.now() - started).nanoseconds) / 1e9
        if let trace = ProcessInfo.processInfo.environment["BENCH_PUSH_TRACE"] {
            // Every push as "seconds since the start, latency in ms", to see when slow ones came.
            let origin = Double(started.uptimeNanoseconds) / 1e9
            let lines = outcomes.flatMap { zip($0.sent, $0.latencies) }.sorted { $0.0 < $1.0 }
                .map { String(format: "%.4f %.2f", $0.0 - origin, $0.1 * 1000) }
            try ("# start \(origin) s (CLOCK_MONOTONIC)\n" + lines.joined(separator: "\n") + "\n").write(
                toFile: trace + ".\(runs.count)" + (pace == nil ? ".saturation" : ".paced"), atomically: true,
                encoding: .utf8)
        }
        let latencies = outcomes.flatMap(\.latencies).sorted()
        let accepted = outcomes.map(\.accepted).reduce(0, +)
        let lags = outcomes.flatMap(\.lags).sorted()
        return Figures(
            eventsPerSecond: Double(accepted) / elapsed,
            p50: percentile(latencies, 0.50) * 1000, p99: percentile(latencies, 0.99) * 1000,
            failures: outcomes.map(\.failures).reduce(0, +), offered: outcomes.map(\.offered).reduce(0, +),
            accepted: accepted, lagP99: lags.isEmpty ? 0 : percentile(lags, 0.99) * 1000,
            acceptedP99: {
                let sorted = outcomes.flatMap(\.acceptedLatencies).sorted();
                return sorted.isEmpty ? 0 : percentile(sorted, 0.99) * 1000
            }(),
            shed: outcomes.map(\.shed).reduce(0, +))
    }
}

struct ServerLoadError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
