import Crypto
import Foundation
import Hummingbird
import InsightsPages
import TourCore

/// The answer every HTML page of the server is sent in (the dashboard's, and the error pages the
/// request log writes for a path under `/dashboard` that no route takes): its headers, its
/// content security policy and its footer.
package enum HTMLPage {
    /// `default-src 'none'`: the page loads nothing; its one style sheet is allowed by its hash, and
    /// so is the one script any page has (the studio's signing in the browser, on its publish form).
    package static let contentSecurityPolicy: String = {
        let hash = Data(SHA256.hash(data: Data(InsightsPage.styleSheet.utf8))).base64EncodedString()
        let script = Data(SHA256.hash(data: Data(InsightsPage.signingScript.utf8))).base64EncodedString()
        return
            """
            default-src 'none'; style-src 'sha256-\(hash)'; script-src 'sha256-\(script)'; \
            form-action 'self'; frame-ancestors 'none'; base-uri 'none'
            """
    }()

    package static func response(_ page: InsightsPage, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                .contentSecurityPolicy: contentSecurityPolicy,
                .xContentTypeOptions: "nosniff",
                .referrerPolicy: "same-origin",
            ],
            body: .init(byteBuffer: ByteBuffer(string: page.render())))
    }

    package static let footer =
        "onboarding-server \(OnboardingVersion.current) · days are UTC; each page says what it counts"

    /// A page that says one thing (a refusal, a page not found).
    package static func message(_ title: String, _ message: String) -> InsightsPage {
        InsightsPage(
            title: title, navigation: [.init("All apps", href: "/dashboard")], sections: [.text(message)],
            footer: footer)
    }
}
