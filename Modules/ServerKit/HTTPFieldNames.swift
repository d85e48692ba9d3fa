import HTTPTypes

/// The header fields the server reads or writes that HTTPTypes does not name.
extension HTTPField.Name {
    /// `/report`'s header when its figures come from a replica that had not caught up in time.
    package static let onboardingStaleSeconds = named("Onboarding-Stale-Seconds")
    package static let xRequestID = named("X-Request-ID")
    static let idempotencyKey = named("Idempotency-Key")
    /// Says an answer is the first answer to the same request, given again.
    static let idempotentReplayed = named("Idempotent-Replayed")
    static let xForwardedFor = named("X-Forwarded-For")
    package static let xForwardedProto = named("X-Forwarded-Proto")
    package static let forwarded = named("Forwarded")
    static let referrerPolicy = named("Referrer-Policy")
    package static let secFetchSite = named("Sec-Fetch-Site")

    /// A name written above as a literal: a token by construction (RFC 9110), so this cannot stop.
    private static func named(_ literal: StaticString) -> Self {
        guard let name = Self("\(literal)") else { preconditionFailure("\(literal) is not a field name") }
        return name
    }
}
