import CoreMetrics
import Dispatch
import Hummingbird
import Logging
import Metrics
import Prometheus
import ServerDatabase
import Synchronization

/// The server's numbers, in Prometheus' text format at `GET /metrics` on a listener of its own
/// (`--metrics-port`, on 127.0.0.1 unless `--metrics-host` says otherwise; Docs/Operating.md,
/// "Metrics"). A port of its own rather than a route beside the API: scrapers live on the private
/// network, the balancer forwards only the API's port, and no credential able to do anything else
/// has to sit in a scraper's configuration.
///
/// Every metric goes through swift-metrics (the counting code does not depend on Prometheus) and
/// is named as Prometheus names things: its base unit in the name (`_seconds`), `_total` for a
/// counter, a `# HELP` line from ``help``, and present from the start (at 0) rather than after its
/// first event, so a dashboard built from the docs finds it.
package enum ServerMetrics {
    /// Dashboard sign-ins refused (a wrong credential, an unknown identity, a forged form).
    package static let signInFailures = Counter(label: "onboarding_sign_in_failures_total")
    /// Lists of live publications answered to devices (200s, not 304s).
    package static let publicationsServed = Counter(label: "onboarding_publications_served_total")
    /// Installs enrolled (`POST /v1/apps/{app}/installs` answered 201).
    package static let installsEnrolled = Counter(label: "onboarding_installs_enrolled_total")
    /// Requests answered 503 before they were routed: the server was answering its limit of them.
    package static let requestsRefused = Counter(label: "onboarding_requests_refused_total")

    /// Every metric's `# HELP`. A metric missing here has none, which MetricsTests refuses.
    static let help: [String: String] = [
        "http_server_request_duration_seconds":
            "Time from a request's arrival to its answer, by route pattern, method and status.",
        "http_server_active_requests": "Requests being answered now, by method.",
        "onboarding_pushes_total":
            """
        Pushes answered, by outcome: committed, refused (its data), failed, cancelled (the caller went \
        away).
        """,
        "onboarding_pushes_shed_total":
            """
        Pushes answered 503 without an acknowledgement, by reason: queue_full, waited_for_writer, \
        no_connection, rolled_back, connection_lost, deadline, shutting_down.
        """,
        "onboarding_push_batches_abandoned_total":
            "Batches of pushes given up at their deadline, their connection closed.",
        "onboarding_push_batch_size": "Pushes per transaction the writers run.",
        "onboarding_push_answer_seconds": "Time from a push's arrival to its answer (its deadline is 4 s).",
        "onboarding_push_queue_length": "Pushes waiting for a writer now.",
        "onboarding_push_writers_busy": "Batches of pushes holding a writer now.",
        "onboarding_database_connections":
            "Connections of each pool in use, and requests waiting for one, now.",
        "onboarding_insights_lag_transactions":
            "Transaction ids between the insights' watermark and the newest one.",
        "onboarding_insights_catch_up_seconds": "Time each run of the insights catch-up took.",
        "onboarding_insights_catch_up_failures_total":
            "Runs of the insights catch-up that failed (not counted while migrations run).",
        "onboarding_sign_in_failures_total": "Dashboard sign-ins refused.",
        "onboarding_publications_served_total":
            "Lists of live publications answered to devices (200s, not 304s).",
        "onboarding_installs_enrolled_total": "Installs enrolled.",
        "onboarding_requests_refused_total":
            "Requests answered 503 before they were routed: the server was answering its limit of "
            + "requests at once (serve --max-requests-in-flight).",
    ]

    /// The process's one registry, bootstrapped into swift-metrics on first use (the services may
    /// start again on another database host; the metrics system is bootstrapped once a process).
    package static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(DocumentedMetrics(registry: registry, help: help))
        return registry
    }()

    /// Makes every counter and gauge of the server's own exist from the start, at 0 (the push
    /// queue's are ``PushMetrics``').
    package static func touch() {
        _ = registry
        for counter in [signInFailures, publicationsServed, installsEnrolled, requestsRefused] {
            counter.increment(by: 0)
        }
        Counter(label: "onboarding_insights_catch_up_failures_total").increment(by: 0)
        Gauge(label: "onboarding_insights_lag_transactions").record(0)
    }

    /// The listener of `/metrics` (a Hummingbird application, run as a service beside the API).
    package static func application(
        registry: PrometheusCollectorRegistry, host: String, port: Int, logger: Logger
    )
        -> some ApplicationProtocol
    {
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            var buffer: [UInt8] = []
            buffer.reserveCapacity(16 << 10)
            registry.emit(into: &buffer)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
        }
        return Application(
            router: router,
            configuration: .init(
                address: .hostname(host, port: port), serverName: "onboarding-server-metrics"),
            logger: logger)
    }
}

/// swift-metrics into a Prometheus registry, each metric with its `# HELP` (swift-prometheus's
/// own factory gives none) and its histogram's buckets.
struct DocumentedMetrics: MetricsFactory {
    let registry: PrometheusCollectorRegistry
    let help: [String: String]

    /// Durations, a millisecond to ten seconds; 4 and 4.25 s around a push's deadline.
    static let durationBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(1500),
        .milliseconds(2500),
        .seconds(4), .milliseconds(4250), .seconds(5), .seconds(10),
    ]
    static let valueBuckets: [Double] = [1, 2, 4, 8, 16, 32, 64]

    /// The metric's name as it is, and its help.
    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: help[label] ?? "")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)])
        -> any FloatingPointCounterHandler
    {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        aggregate
            ? registry.makeValueHistogram(
                descriptor: descriptor(label), labels: dimensions, buckets: Self.valueBuckets)
            : registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(
            descriptor: descriptor(label), labels: dimensions, buckets: Self.durationBuckets)
    }

    func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }
    func destroyRecorder(_ handler: any RecorderHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
        if let histogram = handler as? Prometheus.Histogram<Double> {
            registry.unregisterValueHistogram(histogram)
        }
    }
    func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }
    func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? Prometheus.Histogram<Duration> {
            registry.unregisterDurationHistogram(histogram)
        }
    }
}

/// Each request's duration by route pattern, method and status
/// (`http_server_request_duration_seconds`), and the requests in flight; no series for an
/// error that did not happen.
package struct RequestMetrics<Context: RequestContext>: RouterMiddleware {
    package init() {}

    private final class Timers: Sendable {
        let timers = Mutex<[String: Metrics.Timer]>([:])
        let active = Mutex<[String: Meter]>([:])

        func timer(route: String, method: String, status: Int) -> Metrics.Timer {
            let key = "\(route) \(method) \(status)"
            return timers.withLock { timers in
                if let timer = timers[key] { return timer }
                let timer = Metrics.Timer(
                    label: "http_server_request_duration_seconds",
                    dimensions: [("route", route), ("method", method), ("status", String(status))],
                    preferredDisplayUnit: .seconds)
                timers[key] = timer
                return timer
            }
        }

        func meter(method: String) -> Meter {
            active.withLock { active in
                if let meter = active[method] { return meter }
                let meter = Meter(label: "http_server_active_requests", dimensions: [("method", method)])
                active[method] = meter
                return meter
            }
        }
    }

    private let timers = Timers()

    package func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let method = "\(request.method)"
        let active = timers.meter(method: method)
        active.increment()
        defer { active.decrement() }
        let status: Int
        do {
            let response = try await next(request, context)
            status = Int(response.status.code)
            timers.timer(route: context.endpointPath ?? "NotFound", method: method, status: status)
                .recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - started))
            return response
        } catch {
            status = Int((error as? any HTTPResponseError)?.status.code ?? 500)
            timers.timer(route: context.endpointPath ?? "NotFound", method: method, status: status)
                .recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - started))
            throw error
        }
    }
}
