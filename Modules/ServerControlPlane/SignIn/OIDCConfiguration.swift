import Foundation

/// How people sign in to the dashboard through an OpenID Connect provider (Docs/Security.md).
public struct OIDCConfiguration: Sendable {
    /// The provider's issuer (`https://accounts.example.com`); its discovery document is read from
    /// `ISSUER/.well-known/openid-configuration`.
    public var issuer: String
    public var clientID: String
    /// Read from `ONBOARDING_OIDC_CLIENT_SECRET_FILE` (or the environment), never a flag.
    public var clientSecret: String
    /// The ID token's claim whose value is a person's identity (`email` unless told).
    public var claim: String
    /// The dashboard's origin as browsers reach it (`https://insights.example.com`): the redirect
    /// URI is this and `/dashboard/sign-in/oidc/callback`.
    public var publicURL: String

    public init(
        issuer: String, clientID: String, clientSecret: String, claim: String = "email", publicURL: String
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.claim = claim
        self.publicURL = publicURL
    }

    package var redirectURI: String { publicURL + "/dashboard/sign-in/oidc/callback" }
}
