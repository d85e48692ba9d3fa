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

    /// A funnel table's rows: stage, reached, dropped (skipped and abandoned there).
    func funnelTable(_ browser: Browser, _ id: String) throws -> [(String, Int, Int)] {
        let rows = try #require(
            try browser.evaluate(
                """
                [...document.querySelectorAll('#\(id)-table tbody tr')].map(r => \
                [r.querySelector('th').textContent, ...['reached', 'skipped', 'abandoned'].map(f => \
                r.querySelector('[data-field=' + f + ']').textContent)])
                """
            )
                as? [[String]])
        return rows.map { ($0[0], Int($0[1]) ?? -1, (Int($0[2]) ?? -1) + (Int($0[3]) ?? -1)) }
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

    /// Signs in with a person's credential (the operator's unless given) over plain HTTP, as a
    /// browser does: the sign-in page first (its form secret cookie and anti-forgery token), then
    /// the form; returns the session cookie's value.
    /// A 503 ("try again": the database did not answer within the deadline on a busy machine) is
    /// tried again (``Patience``): signing in is the set-up here, not the subject.
    func signIn(_ server: ServerProcess, credential: String? = nil, headers: [String] = []) throws -> String {
        let credential = try credential ?? server.operatorCredential()
        let answer = try Patience.untilAnswered({
            try Self.postSignIn(server, credential: credential, headers: headers)
        }) {
            $0.status == 503
        }
        guard answer.status == 303, let cookie = answer.setCookie else {
            throw HarnessFailure("sign-in failed: \(answer.status) \(answer.body)")
        }
        return cookie
    }

    /// The sign-in page's form secret (its cookie, by name: `__Host-` over TLS) and anti-forgery token.
    static func signInForm(_ server: ServerProcess, headers: [String] = []) throws -> (
        secret: String, token: String, cookie: String
    ) {
        let page = try curl(server.url.appendingPathComponent("dashboard/sign-in"), headers: headers)
        guard let (name, secret) = page.cookies.first(where: { $0.key.hasSuffix("onboarding_sign_in") }),
            let token = formToken(page.body)
        else {
            throw HarnessFailure("the sign-in page has no form secret or token: \(page.status) \(page.body)")
        }
        return (secret, token, name)
    }

    /// The value of the first `form_token` field of a page.
    static func formToken(_ body: String) -> String? {
        guard let range = body.range(of: "name=\"form_token\" value=\"") else { return nil }
        return String(body[range.upperBound...].prefix { $0 != "\"" })
    }

    /// Posts the sign-in form with `credential`, the way the sign-in page does.
    static func postSignIn(_ server: ServerProcess, credential: String, headers: [String] = []) throws
        -> CurlAnswer
    {
        let form = try signInForm(server, headers: headers)
        return try curl(
            server.url.appendingPathComponent("dashboard/sign-in"), cookies: [form.cookie: form.secret],
            form: "form_token=\(form.token)&credential=\(credential)", headers: headers)
    }

    struct CurlAnswer {
        var status: Int
        var location: String?
        var setCookie: String?
        var body: String
        /// The whole `Set-Cookie` header of the session cookie, attributes included.
        var setCookieHeader: String? = nil
        /// Every cookie set, by name (an empty value: cleared).
        var cookies: [String: String] = [:]
        /// Every header but the cookies, by its name in lower case.
        var headers: [String: String] = [:]
    }

    /// One request by curl, which follows no redirect, with an optional session cookie, form and
    /// further headers ("Name: value").
    static func curl(
        _ url: URL, cookie: String? = nil, cookies: [String: String] = [:], form: String? = nil,
        headers: [String] = []
    ) throws -> CurlAnswer {
        // The request goes to curl as a config on its standard input, not as arguments: a session
        // cookie, a CSRF token or a sign-in form on a command line shows to everyone who runs ps.
        func quoted(_ value: String) -> String {
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                of: "\"", with: "\\\""
            )
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
            return "\"" + escaped + "\""
        }
        var config = ["silent", "include", "url = " + quoted(url.absoluteString)]
        let sent =
            (cookie.map { ["onboarding_session=\($0)"] } ?? []) + cookies.map { "\($0.key)=\($0.value)" }
        if !sent.isEmpty { config.append("header = " + quoted("Cookie: " + sent.joined(separator: "; "))) }
        // curl reads a config line of at most about a megabyte: a larger form goes by a file only
        // its owner reads.
        var formFile: URL?
        defer { formFile.map { try? FileManager.default.removeItem(at: $0) } }
        if let form, form.utf8.count > 100_000 {
            let file = Scratch.folder.appendingPathComponent("form-\(UUID().uuidString)")
            _ = FileManager.default.createFile(
                atPath: file.path, contents: Data(form.utf8), attributes: [.posixPermissions: 0o600])
            formFile = file
            config.append("data-binary = " + quoted("@" + file.path))
        } else if let form {
            config.append("data-raw = " + quoted(form))
        }
        for header in headers { config.append("header = " + quoted(header)) }
        let result = try Shell.run(
            "/usr/bin/curl", ["--config", "-"], stdin: config.joined(separator: "\n") + "\n")
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
        let setCookieLines = lines.filter { $0.lowercased().hasPrefix("set-cookie:") }.map {
            String($0.dropFirst("set-cookie:".count)).trimmingCharacters(in: .whitespaces)
        }
        var cookies: [String: String] = [:]
        for line in setCookieLines {
            let pair = line.split(separator: ";", maxSplits: 1).first ?? ""
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 2 { cookies[String(parts[0])] = String(parts[1]) }
        }
        let setCookie = (cookies["onboarding_session"] ?? cookies["__Host-onboarding_session"]).flatMap {
            $0.isEmpty ? nil : $0
        }
        return CurlAnswer(
            status: status, location: header("Location"), setCookie: setCookie,
            body: parts.dropFirst().joined(separator: "\r\n\r\n"),
            setCookieHeader: setCookieLines.first {
                $0.hasPrefix("onboarding_session=") || $0.hasPrefix("__Host-onboarding_session=")
            },
            cookies: cookies,
            headers: Dictionary(
                lines.dropFirst().compactMap { line in
                    line.firstIndex(of: ":").map {
                        (
                            line[..<$0].lowercased(),
                            line[line.index(after: $0)...].trimmingCharacters(in: .whitespaces)
                        )
                    }
                }
            ) { first, _ in first })
    }
}

extension ServerProcess {
    /// The server's own time for the request sent with `X-Request-ID: id`, in milliseconds: its
    /// request log's `ms` (the server started with `LOG_LEVEL=info`). A bound on how long the server
    /// took, which what a loaded machine adds to starting curl does not break.
    func loggedMilliseconds(requestID id: String) async throws -> Double {
        let line = try await Patience.untilAnswered({ () async -> String in
            self.logText.split(separator: "\n").first { $0.contains(id) }.map(String.init) ?? ""
        }) { $0.isEmpty }
        guard let field = line.split(separator: " ").first(where: { $0.hasPrefix("ms=") }),
            let milliseconds = Double(field.dropFirst(3))
        else { throw HarnessFailure("no time logged for the request \(id): \(line)") }
        return milliseconds
    }
}
