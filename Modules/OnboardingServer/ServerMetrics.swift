import Hummingbird
import Logging
import Metrics
import Prometheus

/// The server's numbers, in Prometheus' text format at `GET /metrics` on a listener of its own
/// (`--metrics-port`, on 127.0.0.1 unless `--metrics-host` says otherwise; Docs/Server.md,
/// "Metrics"). A port of its own rather than a route beside the API: scrapers live on the private
/// network, the balancer forwards only the API's port, and no credential able to do anything else
/// has to sit in a scraper's configuration.
///
/// Requests (count and duration per route, method and status) come from Hummingbird's
/// `MetricsMiddleware`; the rest are named here. Every metric goes through swift-metrics, so the
/// counting code does not depend on Prometheus.
enum ServerMetrics {
    // The push queue's own metrics are ``PushMetrics``.
    // The insights catch-up's own metrics are ServerInsights' `InsightsMetrics`.
    /// Dashboard sign-ins refused (a wrong credential, an unknown identity, a forged form).
    static let signInFailures = Counter(label: "onboarding_sign_in_failures_total")
    /// Lists of live publications answered to devices (200s, not 304s).
    static let publicationsServed = Counter(label: "onboarding_publications_served_total")
    /// Installs enrolled (`POST /v1/apps/{app}/installs` answered 201).
    static let installsEnrolled = Counter(label: "onboarding_installs_enrolled_total")

    /// Makes swift-metrics report into `registry`; once per process, before any metric is used.
    /// The process's one registry, bootstrapped into swift-metrics on first use (the services may
    /// start again on another database host; the metrics system is bootstrapped once a process).
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        bootstrap(registry)
        return registry
    }()

    static func bootstrap(_ registry: PrometheusCollectorRegistry) {
        var factory = PrometheusMetricsFactory(registry: registry)
        // Request and push latencies: a millisecond to ten seconds.
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
        ]
        factory.defaultValueHistogramBuckets = [1, 2, 4, 8, 16, 32, 64]
        MetricsSystem.bootstrap(factory)
    }

    /// The listener of `/metrics` (a Hummingbird application, run as a service beside the API).
    static func application(registry: PrometheusCollectorRegistry, host: String, port: Int, logger: Logger)
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
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "onboarding-server-metrics"),
            logger: logger)
    }
}
