import Metrics

/// The insights catch-up's metrics, beside the server's (`/metrics`).
enum InsightsMetrics {
    /// Transaction ids between the insights watermark and the newest one: how far behind the
    /// aggregates are. And how long each catch-up took, and how many failed.
    static let lag = Gauge(label: "onboarding_insights_lag_transactions")
    static let run = Timer(label: "onboarding_insights_catch_up_seconds", preferredDisplayUnit: .seconds)
    static let failures = Counter(label: "onboarding_insights_catch_up_failures_total")
}
