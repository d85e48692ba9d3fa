import Foundation
import OnboardingServer
import Testing
import TourFixtures

/// The dashboard tests' helpers: signing in and requests by curl, reading tables in the browser,
/// screenshots, and waiting for the insights job.
extension DashboardTests {
    // MARK: - Helpers

    /// Waits (at most 60 s) until the insights job has counted every push stored so far. A page
    /// counts what finished before it was asked for, but waits at most 5 s for transactions still
    /// running anywhere in the PostgreSQL cluster, other tests' included (transaction ids are the
    /// cluster's); a test that must see its own pushes on a page waits here first.
    static func waitUntilCounted(_ server: ServerProcess) async throws {
        for _ in 0..<600 {
            let pending = try server.sql(
                "SELECT count(*) FROM pushes WHERE xact >= (SELECT counted_below FROM insight_progress)")
            if pending == ["0"] { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessFailure("the insights job did not count the pushes within 60 s")
    }

    func cells(_ row: String, _ browser: Browser) throws -> [String] {
        try #require(try browser.evaluate("[...\(row).children].map(c => c.textContent.trim())") as? [String])
    }

    /// A funnel table's rows: stage, reached, dropped.
    func funnelTable(_ browser: Browser, _ id: String) throws -> [(String, Int, Int)] {
        let rows = try #require(
            try browser.evaluate(
                "[...document.querySelectorAll('#\(id)-table tbody tr')].map(r => [r.querySelector('th').textContent, r.querySelector('[data-field=reached]').textContent, r.querySelector('[data-field=dropped]').textContent])")
                as? [[String]])
        return rows.map { ($0[0], Int($0[1]) ?? -1, Int($0[2]) ?? -1) }
    }

    /// Saves a screenshot for the docs when `ONBOARDING_SCREENSHOTS` names a folder
    /// (scripts/dashboard-screenshots); it is taken, and checked to be a PNG, either way.
    func saveScreenshot(_ browser: Browser, _ name: String) throws {
        let png = try browser.screenshot()
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        if let folder = ProcessInfo.processInfo.environment["ONBOARDING_SCREENSHOTS"], !folder.isEmpty {
            try png.write(to: URL(fileURLWithPath: folder).appendingPathComponent("\(name).png"))
        }
    }

    /// Signs in with an admin token over plain HTTP; returns the session cookie's value.
    func signIn(_ server: ServerProcess, token: String? = nil) throws -> String {
        let answer = try Self.curl(
            server.url.appendingPathComponent("dashboard/sign-in"), form: "token=\(try token ?? server.token(account: nil))")
        guard answer.status == 303, let cookie = answer.setCookie else {
            throw HarnessFailure("sign-in failed: \(answer.status) \(answer.body)")
        }
        return cookie
    }

    struct CurlAnswer {
        var status: Int
        var location: String?
        var setCookie: String?
        var body: String
        /// The whole `Set-Cookie` header, attributes included.
        var setCookieHeader: String? = nil
    }

    /// One request by curl, which follows no redirect, with an optional session cookie, form and
    /// further headers ("Name: value").
    static func curl(_ url: URL, cookie: String? = nil, form: String? = nil, headers: [String] = []) throws -> CurlAnswer {
        var arguments = ["-s", "-i", url.absoluteString]
        if let cookie { arguments += ["-H", "Cookie: onboarding_session=\(cookie)"] }
        if let form { arguments += ["--data-raw", form] }
        for header in headers { arguments += ["-H", header] }
        let result = try Shell.run("/usr/bin/curl", arguments)
        let text = result.stdout
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let lines = head.components(separatedBy: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        func header(_ name: String) -> String? {
            lines.first { $0.lowercased().hasPrefix(name.lowercased() + ":") }.map {
                String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces)
            }
        }
        let setCookie = header("Set-Cookie").flatMap { value -> String? in
            guard value.hasPrefix("onboarding_session="), let end = value.firstIndex(of: ";") else { return nil }
            let cookie = String(value[value.index(value.startIndex, offsetBy: "onboarding_session=".count)..<end])
            return cookie.isEmpty ? nil : cookie
        }
        return CurlAnswer(
            status: status, location: header("Location"), setCookie: setCookie, body: parts.dropFirst().joined(separator: "\r\n\r\n"),
            setCookieHeader: header("Set-Cookie"))
    }
}
