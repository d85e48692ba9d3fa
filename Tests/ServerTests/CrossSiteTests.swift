import Foundation
import TestThreads
import Testing
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

/// Forged requests from other sites, in a real headless Chromium: the dashboard at
/// `dash.example.test`, an attacker's pages at `evil.example.test` (a sibling subdomain: the same
/// site, so `SameSite` cookies go with its requests) and at `127.0.0.1` (another site). A forged
/// sign-out, a forged change of people and a login CSRF (the attacker's own credential posted into
/// the victim's browser, with a cookie tossed from the sibling subdomain) all fail; the genuine
/// ones work in the same browser.
@Suite("Cross-site forgery in a real browser", .serialized, .ownThread)
struct CrossSiteTests {
    /// A static site of the attacker's: `python3 -m http.server` on a folder of pages.
    final class AttackerSite: @unchecked Sendable {
        let folder: URL
        let port: Int
        private let process: Process

        init() throws {
            folder = Scratch.folder.appendingPathComponent("evil-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            port = ServerProcess.freePort()
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [
                "-m", "http.server", "--bind", "127.0.0.1", "\(port)", "--directory", folder.path,
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try ChildProcess.spawning { try process.run() }
            let deadline = Date().addingTimeInterval(20)
            while HTTP.status(try URL(checking: "http://127.0.0.1:\(port)/")) == nil {
                guard Date() < deadline else { throw HarnessFailure("the attacker's site did not start") }
                usleep(100_000)
            }
        }

        deinit {
            kill(process.processIdentifier, SIGKILL)
            try? FileManager.default.removeItem(at: folder)
        }

        func page(_ name: String, _ html: String) throws {
            try html.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
    }

    static func form(_ action: String, _ fields: [String: String], script: String = "") -> String {
        let inputs = fields.map { "<input type=\"hidden\" name=\"\($0.key)\" value=\"\($0.value)\">" }
            .joined()
        return
            """
            <!DOCTYPE html><html><body><h1>Win a prize</h1><form method=\"post\" \
            action=\"\(action)\">\(inputs)</form><script>\(script)</script></body></html>
            """
    }

    @Test func forgedSignOutForgedChangesAndLoginCSRFFailWhileGenuineOnesWork() async throws {
        let server = try ServerProcess()
        let operatorCredential = try server.operatorCredential()
        let mallory = try server.credential("mallory", role: "viewer", app: "growth")
        let site = try AttackerSite()
        let dashboard = "http://dash.example.test:\(server.port)"
        let evil = "http://evil.example.test:\(site.port)"
        let browser = try Browser(arguments: ["--host-resolver-rules=MAP *.example.test 127.0.0.1"])

        // The victim signs in, genuinely.
        try browser.open(URL(string: dashboard + "/dashboard/sign-in")!)
        _ = try browser.evaluate(
            "document.querySelector('input[name=credential]').value = '\(operatorCredential)'")
        try browser.leave { _ = try browser.evaluate("document.querySelector('form').submit()") }
        #expect(browser.title.hasPrefix("All apps"), "\(browser.title)")
        func signedIn() throws -> Bool {
            try browser.open(URL(string: dashboard + "/dashboard")!)
            return browser.title.hasPrefix("All apps")
        }

        // A forged sign-out from the sibling subdomain: refused, the session and its cookie stay.
        try site.page("signout.html", Self.form(dashboard + "/dashboard/sign-out", ["form_token": "guessed"]))
        try browser.open(URL(string: evil + "/signout.html")!)
        try browser.leave { _ = try browser.evaluate("document.forms[0].submit()") }
        #expect(
            try browser.evaluate(
                "document.body.innerText.includes('did not come from a page of this dashboard')") as? Bool
                == true)
        #expect(try signedIn())
        #expect(try server.sql("SELECT count(*) FROM dashboard_sessions WHERE person = 'operator'") == ["1"])
        // Even with the right form token, a request from another origin changes nothing.
        let token = try #require(
            try browser.evaluate("document.querySelector('form.sign-out input[name=form_token]').value")
                as? String)
        try site.page("signout2.html", Self.form(dashboard + "/dashboard/sign-out", ["form_token": token]))
        try browser.open(URL(string: evil + "/signout2.html")!)
        try browser.leave { _ = try browser.evaluate("document.forms[0].submit()") }
        #expect(try signedIn())
        // A forged change of people: refused, nobody added.
        try site.page(
            "people.html",
            Self.form(
                dashboard + "/dashboard/apps/growth/people",
                ["form_token": token, "person": "mallory", "role": "owner"]))
        try browser.open(URL(string: evil + "/people.html")!)
        try browser.leave { _ = try browser.evaluate("document.forms[0].submit()") }
        #expect(try server.sql("SELECT role FROM person_roles WHERE person = 'mallory'") == ["viewer"])
        #expect(try signedIn())

        // The genuine sign-out, from the dashboard's own page: the cookie is cleared.
        try browser.leave { _ = try browser.evaluate("document.querySelector('form.sign-out').submit()") }
        #expect(browser.location.hasSuffix("/dashboard/sign-in"))
        #expect(try !signedIn())
        #expect(
            try browser.cookies(for: URL(string: dashboard + "/dashboard")!).allSatisfy {
                $0["name"] as? String != "onboarding_session"
            })

        // Login CSRF: the attacker fetched a sign-in form of their own, tosses its secret cookie into
        // the victim's browser for the whole site, and posts their own credential with its token.
        let attackersForm = try DashboardTests.signInForm(server)
        let toss =
            """
            document.cookie = 'onboarding_sign_in=\(attackersForm.secret); domain=example.test; \
            path=/dashboard';
            """
        try site.page(
            "login.html",
            Self.form(
                dashboard + "/dashboard/sign-in", ["form_token": attackersForm.token, "credential": mallory],
                script: toss))
        try browser.open(URL(string: evil + "/login.html")!)
        try browser.leave { _ = try browser.evaluate("document.forms[0].submit()") }
        #expect(
            try browser.evaluate(
                "document.body.innerText.includes(\"did not come from this dashboard's own page\")") as? Bool
                == true)
        #expect(try !signedIn(), "the victim is not signed in as the attacker")
        #expect(try server.sql("SELECT count(*) FROM dashboard_sessions WHERE person = 'mallory'") == ["0"])
        // From another site altogether (127.0.0.1 is not example.test): refused the same way.
        try browser.open(URL(string: "http://127.0.0.1:\(site.port)/login.html")!)
        try browser.leave { _ = try browser.evaluate("document.forms[0].submit()") }
        #expect(try !signedIn())
        #expect(try server.sql("SELECT count(*) FROM dashboard_sessions WHERE person = 'mallory'") == ["0"])
        #expect(try server.sql("SELECT count(*) FROM audit_log WHERE action = 'sign-in.refused'") == ["2"])

        // The genuine sign-in works in that very browser.
        try browser.open(URL(string: dashboard + "/dashboard/sign-in")!)
        _ = try browser.evaluate(
            "document.querySelector('input[name=credential]').value = '\(operatorCredential)'")
        try browser.leave { _ = try browser.evaluate("document.querySelector('form').submit()") }
        #expect(browser.title.hasPrefix("All apps"))
    }
}
