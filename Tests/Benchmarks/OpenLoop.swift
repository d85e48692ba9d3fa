import AccountSync
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import OnboardingServer
import ServerTokens
import TourCodec

/// Pushes that arrive on a schedule whatever the answers: an open loop, as a thousand phones at a
/// user's pace are. Each push is sent at its slot on a free connection (a new one when none is
/// free), so a slow answer does not hold back the pushes after it, unlike ``PushDevice``, whose
/// one push in flight per device let the load slow itself down to what the server took.
///
/// Slots are spread evenly over the run (`rate` a second), each the next journal row of one of
/// the `runs` devices in turn. A push's latency is from its send to its whole answer; its lag,
/// from its slot to its send (a connection being opened), is reported apart.
final class OpenLoopLoad: @unchecked Sendable {
    struct Outcome {
        var offered = 0
        var accepted = 0
        var shed = 0
        var otherFailures = 0
        /// Pushes never sent: the connection cap was reached.
        var unsent = 0
        var acceptedLatencies: [Double] = []
        var latencies: [Double] = []
        var lags: [Double] = []
        var connections = 0
        /// When each push was answered (seconds since the run began) and whether it was accepted.
        var answers: [(at: Double, accepted: Bool)] = []
        /// Answers by status (0: no answer, the connection failed).
        var statuses: [Int: Int] = [:]
    }

    private let lock = NIOLock()
    private var outcome = Outcome()
    private var free: [Lane] = []
    private var requests: [(HTTPRequestHead, ByteBuffer)] = []
    private var next = 0
    private var started = NIODeadline.now()
    private let host: String
    private let port: Int
    private let tokens: [String]
    private let group = MultiThreadedEventLoopGroup.singleton
    private let cap: Int
    private var outstanding = 0
    private var done: EventLoopPromise<Void>?
    private var ended = false

    init(runs: [ServerLoad.DeviceRun], tokens: [String], host: String, port: Int, cap: Int = 8_000) {
        self.tokens = tokens
        self.host = host
        self.port = port
        self.cap = cap
        self.runs = runs
    }

    private var runs: [ServerLoad.DeviceRun]

    /// Offers `rate` pushes a second for `duration` seconds, after opening `warm` connections.
    /// Every request is encoded before the clock starts (the load generator shares the cores it
    /// measures).
    func run(rate: Double, duration: Double, warm: Int) async throws -> Outcome {
        let count = Int(rate * duration)
        requests = try (0..<count).map { _ in try request() }.reversed()
        for _ in 0..<warm { free.append(try await connect()) }
        let loop = group.next()
        let promise = loop.makePromise(of: Void.self)
        lock.withLock { done = promise }
        let started = NIODeadline.now()
        self.started = started
        let gap = 1e9 / rate
        for index in 0..<count {
            let slot = started + .nanoseconds(Int64(Double(index) * gap))
            loop.scheduleTask(deadline: slot) { self.send(slot: slot) }
        }
        loop.scheduleTask(deadline: started + .nanoseconds(Int64(duration * 1e9))) {
            self.lock.withLock { self.ended = true }
            self.finishIfDone()
        }
        try await promise.futureResult.get()
        return lock.withLock { outcome }
    }

    private func connect() async throws -> Lane {
        let lane = Lane(owner: self)
        let loop = group.next()
        _ = try await ClientBootstrap(group: loop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(lane)
                }
            }
            .connect(host: host, port: port).get()
        lock.withLock { outcome.connections += 1 }
        return lane
    }

    /// The request of the next device in turn.
    private func request() throws -> (HTTPRequestHead, ByteBuffer) {
        let index = next % runs.count
        next += 1
        let run = runs[index]
        let body = try PushBatch(device: run.device, items: [runs[index].item()]).tourValue.jsonUTF8()
        var head = HTTPRequestHead(
            version: .http1_1, method: .POST,
            uri: SyncAPI.accountPath(app: run.app, account: run.account) + "/push")
        head.headers.add(name: "Host", value: "\(host):\(port)")
        head.headers.add(name: "Authorization", value: "Bearer \(tokens[index])")
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Content-Length", value: String(body.count))
        return (head, ByteBuffer(bytes: body))
    }

    private func send(slot: NIODeadline) {
        let taken: (lane: Lane?, request: (HTTPRequestHead, ByteBuffer)?, open: Bool) = lock.withLock {
            outcome.offered += 1
            let request = requests.popLast()
            if let lane = free.popLast() {
                outstanding += 1
                return (lane, request, false)
            }
            guard outcome.connections + outstanding < cap * 2, outcome.connections < cap else {
                outcome.unsent += 1
                return (nil, nil, false)
            }
            outstanding += 1
            return (nil, request, true)
        }
        guard let request = taken.request else { return }
        if let lane = taken.lane {
            lane.send(request, slot: slot)
        } else if taken.open {
            Task {
                do {
                    let lane = try await self.connect()
                    lane.send(request, slot: slot)
                } catch {
                    self.answered(nil, status: nil, latency: 0, lag: 0)
                }
            }
        }
    }

    /// A lane's push answered (`status` nil: failed); the lane is free again.
    fileprivate func answered(_ lane: Lane?, status: HTTPResponseStatus?, latency: Double, lag: Double) {
        lock.withLock {
            outstanding -= 1
            outcome.latencies.append(latency)
            outcome.lags.append(lag)
            outcome.answers.append((Double((NIODeadline.now() - started).nanoseconds) / 1e9, status == .ok))
            outcome.statuses[Int(status?.code ?? 0), default: 0] += 1
            switch status {
            case .ok?:
                outcome.accepted += 1
                outcome.acceptedLatencies.append(latency)
            case .serviceUnavailable?: outcome.shed += 1
            default: outcome.otherFailures += 1
            }
            if let lane { free.append(lane) }
        }
        finishIfDone()
    }

    private func finishIfDone() {
        let promise: EventLoopPromise<Void>? = lock.withLock {
            guard ended, outstanding == 0, let done else { return nil }
            self.done = nil
            return done
        }
        promise?.succeed(())
    }

    /// One keep-alive connection, one push at a time.
    fileprivate final class Lane: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart

        private weak var owner: OpenLoopLoad?
        private var context: ChannelHandlerContext?
        private var sentAt: NIODeadline?
        private var slot = NIODeadline.now()
        private var status: HTTPResponseStatus?

        init(owner: OpenLoopLoad) { self.owner = owner }

        private var loop: (any EventLoop)?

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
            loop = context.eventLoop
        }

        func send(_ request: (HTTPRequestHead, ByteBuffer), slot: NIODeadline) {
            guard let loop else { return owner?.answered(nil, status: nil, latency: 0, lag: 0) ?? () }
            loop.execute {
                guard let context = self.context else {
                    return self.owner?.answered(nil, status: nil, latency: 0, lag: 0) ?? ()
                }
                self.slot = slot
                self.sentAt = NIODeadline.now()
                self.status = nil
                context.write(self.wrapOutboundOut(.head(request.0)), promise: nil)
                context.write(self.wrapOutboundOut(.body(.byteBuffer(request.1))), promise: nil)
                context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
            }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): status = head.status
            case .body: break
            case .end:
                guard let sentAt else { return }
                self.sentAt = nil
                let now = NIODeadline.now()
                owner?.answered(
                    self, status: status, latency: Double((now - sentAt).nanoseconds) / 1e9,
                    lag: Double((sentAt - slot).nanoseconds) / 1e9)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            self.context = nil
            if sentAt != nil {
                sentAt = nil
                owner?.answered(nil, status: nil, latency: 0, lag: 0)
            }
        }
    }
}

extension ServerLoad {
    /// `count` devices offering `eventsPerSecond` together whatever the answers (``OpenLoopLoad``);
    /// then the rows the server stored for them, which must be exactly the pushes it acknowledged.
    func openLoop(_ count: Int, run: String, eventsPerSecond: Double) async throws -> (
        OpenLoopLoad.Outcome, stored: Int
    ) {
        guard let host = server.host, let port = server.port else {
            throw ServerLoadError("no host and port in \(server)")
        }
        let runs = try Self.devices(count, run: run, app: "load")
        let expires = Int64(Date().timeIntervalSince1970) + 3600
        var tokens: [String] = []
        for run in runs {
            tokens.append(
                await signer.sign(
                    TokenClaims(subject: run.account, scope: .account, app: run.app, expires: expires)))
        }
        let load = OpenLoopLoad(runs: runs, tokens: tokens, host: host, port: port)
        let outcome = try await load.run(
            rate: eventsPerSecond, duration: duration, warm: min(2_000, count * 2))
        let stored = try await withClient(connections: 1) { client in
            var stored = 0
            let rows = try await client.query(
                "SELECT count(*)::bigint FROM pushes WHERE app = 'load' AND account LIKE \(run + "-%")")
            for try await count in rows.decode(Int64.self) { stored = Int(count) }
            return stored
        }
        return (outcome, stored)
    }
}

extension ServerLoad {
    /// `count` devices pushing one event a second each (an open loop) while `pushes` is locked from
    /// `at` for `hold` seconds (a migration's lock): how long after the lock went the first push
    /// was accepted, and how many were answered past their deadline (4 s, and a quarter second
    /// for the load generator).
    func lockFault(_ count: Int, run: String, at: Double, hold: Double) async throws -> (
        recovery: Double?, late: Int, shed: Int
    ) {
        guard let host = server.host, let port = server.port else {
            throw ServerLoadError("no host and port in \(server)")
        }
        let runs = try Self.devices(count, run: run, app: "load")
        let expires = Int64(Date().timeIntervalSince1970) + 3600
        var tokens: [String] = []
        for run in runs {
            tokens.append(
                await signer.sign(
                    TokenClaims(subject: run.account, scope: .account, app: run.app, expires: expires)))
        }
        let load = OpenLoopLoad(runs: runs, tokens: tokens, host: host, port: port)
        let started = ContinuousClock.now
        let holder = Task.detached {
            try await Task.sleep(for: .milliseconds(Int(at * 1000)))
            try self.holdLock(seconds: hold)
            return seconds(ContinuousClock.now - started)
        }
        let outcome = try await load.run(
            rate: Double(count), duration: at + hold + 6, warm: min(2_000, count * 2))
        let released = try await holder.value
        // The run's clock began a little after `started`: its answers are measured from its start.
        let offset = seconds(ContinuousClock.now - started) - (at + hold + 6)
        let recovery = outcome.answers.filter { $0.accepted && $0.at + max(0, offset) >= released }.map(\.at)
            .min()
            .map { $0 + max(0, offset) - released }
        return (recovery, outcome.latencies.filter { $0 > 4.25 }.count, outcome.shed)
    }

    /// Holds `pushes` under an exclusive lock for `seconds` from a psql session of its own.
    func holdLock(seconds: Double) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/lib/postgresql/15/bin/psql")
        var environment = ProcessInfo.processInfo.environment
        if let password = database.password { environment["PGPASSWORD"] = password }
        process.environment = environment
        process.arguments = [
            "-h", database.host, "-p", "\(database.port)", "-U", database.user, "-d", database.database,
            "-qtAc",
            "BEGIN; LOCK TABLE pushes IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(\(seconds)); COMMIT;",
        ]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
    }
}
