import Foundation
import OnboardingServer
import ServerTokens
import TestThreads
import Testing
import TourCodec
import TourFixtures

/// The control plane as people and attackers use it (Docs/Security.md), through the real
/// server, its commands and a real PostgreSQL: named people with roles, each credential revocable on
/// its own, an audit trail the server's role cannot rewrite, rate limits on failures.
@Suite("Control plane: people, roles, audit, rate limits", .ownThread)
struct ControlPlaneTests {
    static func report(_ server: ServerProcess, _ app: String = "growth") -> URL {
        server.url.appendingPathComponent("v1/apps/\(app)/report")
    }

    /// Roles decide what each person may do; removing one, or rotating a credential, refuses the
    /// old credential on the very next request while everyone else goes on; every act is one row.
    @Test func rolesDecideAndARevokedPersonIsRefusedAtOnceWhileOthersGoOn() async throws {
        let server = try ServerProcess()
        let ann = try server.credential("ann", role: "owner", app: "growth")
        let vic = try server.credential("vic", role: "viewer", app: "growth")
        let bob = try server.credential("bob", role: "publisher", app: "growth")
        let fay = try server.credential("fay", role: "viewer", app: "finite")

        // A viewer reads growth's reports; the viewer of finite does not; an account token does not.
        #expect(try await HTTP.get(Self.report(server), token: vic).status == 200)
        let other = try await HTTP.get(Self.report(server), token: fay)
        #expect(other.status == 403)
        #expect(String(decoding: other.body, as: UTF8.self).contains("fay is not a member of growth"))
        #expect(
            try await HTTP.get(Self.report(server), token: try server.token(account: "ann")).status == 403)
        // Only owners manage people and read the audit trail.
        let people = server.url.appendingPathComponent("v1/apps/growth/people")
        #expect(try await HTTP.get(people, token: bob).status == 403)
        let listed = try await HTTP.get(people, token: ann)
        #expect(listed.status == 200)
        let names = (listed.json["people"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names == ["ann", "bob", "vic"])
        // No credential's text is ever listed: the server does not have it.
        let body = String(decoding: listed.body, as: UTF8.self)
        for credential in [ann, vic, bob] { #expect(!body.contains(credential)) }
        #expect(
            try await HTTP.get(
                server.url.appendingPathComponent("v1/audit").appending(queryItems: [
                    .init(name: "app", value: "growth")
                ]), token: vic
            ).status == 403)

        // An owner takes vic's only role away: vic is removed, refused on the next request.
        let removed = try await HTTP.send(
            "DELETE", people.appendingPathComponent("vic"), token: ann, body: nil)
        #expect(removed.status == 200, "\(String(decoding: removed.body, as: UTF8.self))")
        let refused = try await HTTP.get(Self.report(server), token: vic)
        #expect(refused.status == 401)
        #expect(refused.errorCode == "credential_revoked")
        #expect(try await HTTP.get(Self.report(server), token: bob).status == 200, "everyone else goes on")

        // Rotating bob's credential refuses the old one at once; the new one works; ann is untouched.
        let rotated = try server.command(["people", "rotate", "--name", "bob"])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let newBob = rotated.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await HTTP.get(Self.report(server), token: bob).status == 401)
        #expect(try await HTTP.get(Self.report(server), token: newBob).status == 200)
        #expect(try await HTTP.get(Self.report(server), token: ann).status == 200)

        // An owner adds a person over the API: their credential is answered once, and works.
        let added = try await HTTP.send(
            "PUT", people.appendingPathComponent("dee"), token: ann, body: Data(#"{"role": "editor"}"#.utf8),
            headers: ["Content-Type": "application/json"])
        #expect(added.status == 201)
        let dee = try #require(added.json["credential"] as? String)
        #expect(try await HTTP.get(Self.report(server), token: dee).status == 200)
        // An owner of growth cannot make someone an operator's identity theirs.
        let operatorCredential = try server.operatorCredential()
        let hijack = try await HTTP.send(
            "PUT", people.appendingPathComponent("operator"), token: ann,
            body: Data(#"{"role": "viewer", "identity": "ann@example.com"}"#.utf8), headers: [:])
        #expect(hijack.status == 403)
        #expect(try await HTTP.get(Self.report(server), token: operatorCredential).status == 200)

        // The shared admin token of earlier releases is refused, saying what replaces it.
        let retired = try await HTTP.get(
            Self.report(server), token: try await TokenSignerForTests().adminToken(seconds: 600))
        #expect(retired.status == 401)
        #expect(retired.errorCode == "token_outdated")
        let minting = try server.command(["token", "--admin"])
        #expect(minting.status != 0)
        #expect(minting.stderr.contains("people add"))

        // Sessions are a person's across apps: an owner of growth does not end those of someone who
        // also holds a role in finite; an operator does.
        _ = try server.command(["people", "add", "--name", "bob", "--role", "viewer", "--app", "finite"])
        let beyond = try await HTTP.post(
            people.appendingPathComponent("bob/end-sessions"), token: ann, body: Data())
        #expect(beyond.status == 403, "\(String(decoding: beyond.body, as: UTF8.self))")
        #expect(
            try await HTTP.post(
                people.appendingPathComponent("bob/end-sessions"), token: operatorCredential, body: Data()
            ).status == 200)
        // Owners see operators by name and role only.
        let seen = try await HTTP.get(people, token: ann)
        let operatorEntry = (seen.json["people"] as? [[String: Any]] ?? []).first {
            $0["name"] as? String == "operator"
        }
        #expect(operatorEntry?["credentials"] == nil && operatorEntry?["roles"] != nil, "\(seen.json)")

        // One audit row per act, naming who did it; minting a token is one too.
        let rows = try server.sql(
            "SELECT actor || ' ' || action || ' ' || coalesce(target, '') FROM audit_log ORDER BY id")
        for expected in ["person.removed vic", "credential.rotated bob", "person.added dee"] {
            #expect(rows.filter { $0.hasSuffix(expected) }.count == 1, "\(expected): \(rows)")
        }
        // One act, one row: adding dee as an editor is one row (its role in its details), and
        // removing vic's only role removes vic in one row.
        #expect(
            !rows.contains { $0.hasSuffix("role.granted dee") || $0.hasSuffix("role.removed vic") }, "\(rows)"
        )
        #expect(
            try server.sql(
                """
                SELECT details::jsonb->>'role' FROM audit_log WHERE action = 'person.added' AND target = \
                'dee'
                """
            ) == ["editor"])
        #expect(
            try server.sql(
                """
                SELECT details::jsonb->>'role' FROM audit_log WHERE action = 'person.removed' AND target \
                = 'vic'
                """
            ) == ["viewer"])
        #expect(rows.contains("ann person.added dee"))
        // A minted token's row names the account by a keyed hash, never in clear.
        let minted = try TokenSigner(secret: ServerProcess.secret).subjectPseudonym(
            app: "growth", subject: "ann")
        #expect(minted.hasPrefix("hmac:") && minted.count == 37)
        #expect(rows.contains { $0.hasSuffix("token.minted \(minted)") }, "\(rows)")
        #expect(!rows.contains { $0.contains("token.minted") && $0.hasSuffix(" ann") }, "\(rows)")
        #expect(rows.contains { $0.hasPrefix("command line (") && $0.hasSuffix("person.added vic") })
        let audit = try await HTTP.get(
            server.url.appendingPathComponent("v1/audit").appending(queryItems: [
                .init(name: "app", value: "growth")
            ]), token: ann)
        #expect(audit.status == 200)
        #expect(
            (audit.json["entries"] as? [[String: Any]] ?? []).contains {
                $0["action"] as? String == "person.removed"
            })
        let printed = try server.command(["audit", "--app", "growth"])
        #expect(
            printed.stdout.contains("ann from 127.0.0.1: person.removed vic (growth)"), "\(printed.stdout)")
    }

    /// The audit trail refuses UPDATE, DELETE and TRUNCATE from the server's role, and its hash
    /// chain finds a row changed by someone who went around that (the table's owner).
    @Test func theAuditTrailRefusesChangesAndItsChainFindsOneMadeAroundTheTrigger() async throws {
        let server = try ServerProcess()
        _ = try server.credential("ann", role: "owner", app: "growth")
        _ = try server.command(["people", "add", "--name", "ann", "--role", "publisher", "--app", "finite"])
        _ = try server.command(["people", "end-sessions", "--name", "ann"])
        let count = try server.sql("SELECT count(*) FROM audit_log").first
        for statement in [
            "UPDATE audit_log SET actor = 'someone else'", "DELETE FROM audit_log", "TRUNCATE audit_log",
        ] {
            let result = try Shell.run(TestPostgres.psql, [server.databaseURL, "-qc", statement])
            #expect(result.status != 0, "\(statement)")
            #expect(result.stderr.contains("the audit log is append-only"), "\(statement): \(result.stderr)")
        }
        #expect(try server.sql("SELECT count(*) FROM audit_log").first == count)
        let intact = try server.command(["audit", "--verify"])
        #expect(intact.status == 0)
        #expect(intact.stdout.contains("rows are intact"))
        // The table's owner can go around the trigger; the chain then names the row.
        _ = try server.sql(
            """
            ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only; UPDATE audit_log SET actor = \
            'mallory' WHERE id = 2; ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only
            """
        )
        let broken = try server.command(["audit", "--verify"])
        #expect(broken.status == 1)
        #expect(broken.stderr.contains("broken at row 2"), "\(broken.stderr)")
        _ = try server.sql(
            """
            ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only; UPDATE audit_log SET actor = \
            'command line (onboarding@ci)' WHERE id = 2 AND actor = 'mallory'; ALTER TABLE audit_log \
            ENABLE TRIGGER audit_log_append_only
            """
        )
    }

    /// An anchor kept outside the database finds what the chain alone cannot: the newest rows cut
    /// off by the table's owner (the rows left still chain).
    @Test func anAnchorKeptOutsideFindsTheTrailCutShort() async throws {
        let server = try ServerProcess()
        _ = try server.credential("ann", role: "owner", app: "growth")
        _ = try server.command(["people", "end-sessions", "--name", "ann"])
        let anchors = Scratch.folder.appendingPathComponent("anchors-\(UUID().uuidString)").path
        let first = try server.command(["audit", "--verify", "--anchors", anchors])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("head: row"))
        // The owner cuts the newest row; the chain of what is left is intact.
        _ = try server.sql(
            """
            ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only; DELETE FROM audit_log WHERE id \
            = (SELECT max(id) FROM audit_log); ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only
            """
        )
        #expect(try server.command(["audit", "--verify"]).status == 0)
        let cut = try server.command(["audit", "--verify", "--anchors", anchors])
        #expect(cut.status == 1)
        #expect(cut.stderr.contains("was rewritten or cut"), "\(cut.stderr)")
    }

    /// A form is read by Hummingbird's URL-encoded form decoder: a field given twice (a second
    /// credential smuggled after the first), a nested field or a broken percent-encoding is refused
    /// whole with one message and signs no one in; the same form with each field once signs in.
    @Test func aFormWithAFieldTwiceNestedOrBadlyEncodedIsRefusedWhole() async throws {
        let server = try ServerProcess()
        let ann = try server.credential("ann", role: "viewer", app: "growth")
        for body in [
            "credential=\(ann)&credential=obt2.wrong.x", "credential=obt2.wrong.x&credential=\(ann)",
            "credential[a]=\(ann)", "credential=%zz",
        ] {
            let form = try DashboardTests.signInForm(server)
            let answer = try DashboardTests.curl(
                server.url.appendingPathComponent("dashboard/sign-in"), cookies: [form.cookie: form.secret],
                form: "form_token=\(form.token)&" + body)
            #expect(answer.status == 400, "\(body): \(answer.status) \(answer.body)")
            #expect(answer.body.contains("it takes each field once"), "\(body): \(answer.body)")
            #expect(answer.setCookie == nil, "\(body) signed someone in")
        }
        #expect(try DashboardTests.postSignIn(server, credential: ann).status == 303)
    }

    /// Behind a trusted balancer, the client is the nearest address in X-Forwarded-For that is not
    /// the balancer's, read across every line of the header (a forged first line changes nothing);
    /// from an untrusted peer the header is ignored.
    @Test func theClientAddressComesFromTheTrustedBalancerOnly() async throws {
        let server = try ServerProcess(environment: ["ONBOARDING_TRUSTED_PROXIES": "127.0.0.1"])
        let form = try DashboardTests.signInForm(server)
        func fail(_ headers: [String]) throws {
            _ = try DashboardTests.curl(
                server.url.appendingPathComponent("dashboard/sign-in"), cookies: [form.cookie: form.secret],
                form: "form_token=\(form.token)&credential=obt2.wrong.x", headers: headers)
        }
        try fail(["X-Forwarded-For: 6.6.6.6", "X-Forwarded-For: 203.0.113.9"])
        try fail(["X-Forwarded-For: 2001:db8:1:2:aaaa::1"])
        let sources = try server.sql(
            "SELECT source FROM audit_log WHERE action = 'sign-in.failed' ORDER BY id")
        #expect(sources == ["203.0.113.9", "2001:db8:1:2::/64"], "\(sources)")
        // Untrusted (the peer is 127.0.0.2): the header is the client's own word, and ignored.
        let script = """
            import http.client
            conn = http.client.HTTPConnection("127.0.0.1", \(server.port), source_address=("127.0.0.2", 0))
            conn.request("POST", "/dashboard/sign-in", "form_token=\(form.token)&credential=obt2.wrong.y",
                {"Content-Type": "application/x-www-form-urlencoded", "Cookie": \
            "\(form.cookie)=\(form.secret)", "X-Forwarded-For": "198.51.100.7"})
            print(conn.getresponse().status)
            """
        #expect(try Shell.run("/usr/bin/python3", ["-c", script]).stdout.hasPrefix("401"))
        #expect(
            try server.sql(
                "SELECT source FROM audit_log WHERE action = 'sign-in.failed' ORDER BY id DESC LIMIT 1") == [
                    "127.0.0.2"
                ])
    }

    /// 1,000 wrong sign-ins from one address are slowed to a trickle (429 with Retry-After, unchecked),
    /// while a real person signs in meanwhile from another; failures naming a person slow only failures.
    @Test func wrongSignInsFromOneSourceAreSlowedAndARealPersonSignsInMeanwhile() async throws {
        let server = try ServerProcess()
        let ann = try server.credential("ann", role: "viewer", app: "growth")
        let form = try DashboardTests.signInForm(server)
        // The attacker, from 127.0.0.2 (loopback, another address), one connection, 1,000 tries.
        let script = """
            import http.client, sys, time
            conn = http.client.HTTPConnection("127.0.0.1", \(server.port), source_address=("127.0.0.2", 0))
            statuses = {}
            retry = None
            start = time.time()
            for i in range(1000):
                body = "form_token=\(form.token)&credential=obt2.guess%d.x" % i
                conn.request("POST", "/dashboard/sign-in", body, {"Content-Type": \
            "application/x-www-form-urlencoded", "Cookie": "onboarding_sign_in=\(form.secret)"})
                answer = conn.getresponse()
                answer.read()
                statuses[answer.status] = statuses.get(answer.status, 0) + 1
                if answer.status == 429 and retry is None:
                    retry = answer.getheader("Retry-After")
            print(statuses.get(401, 0), statuses.get(429, 0), retry, round(time.time() - start, 2))
            """
        async let attack = Task.blocking { try Shell.run("/usr/bin/python3", ["-c", script], seconds: 300) }
            .value
        // Meanwhile a real person signs in, from 127.0.0.1.
        try await Task.sleep(for: .milliseconds(300))
        let session = try DashboardTests().signIn(server, credential: ann)
        #expect(
            try DashboardTests.curl(server.url.appendingPathComponent("dashboard"), cookie: session).status
                == 200)
        let result = try await attack
        #expect(result.status == 0, "\(result.stderr)")
        // "401s 429s Retry-After seconds\n": split at any whitespace, or the last figure keeps the
        // line's end, reads as no number, and the bound below forgets how long the attack took.
        let figures = result.stdout.split(whereSeparator: \.isWhitespace)
        let checked = Int(figures[0]) ?? -1, limited = Int(figures[1]) ?? -1
        let took = try #require(Double(figures.count > 3 ? figures[3] : ""), "\(result.stdout)")
        // 20 failures, then one more per 3 s of the attack: a few dozen checked at most (more on a
        // slow machine, whose attack lasts longer), the rest refused unchecked.
        #expect((20...(20 + Int(took / 3) + 1)).contains(checked), "\(result.stdout)")
        #expect(limited == 1000 - checked)
        #expect(Int(figures[2]) ?? 0 >= 1, "Retry-After: \(result.stdout)")
        // Checked failures are audited, each; the limit once it was reached; nothing unchecked.
        let audited = try server.sql(
            """
            SELECT action, count(*) FROM audit_log WHERE source = '127.0.0.2' GROUP BY action ORDER BY \
            action
            """
        )
        #expect(audited.contains("sign-in.failed|\(checked)"), "\(audited)")
        #expect(audited.contains { $0.hasPrefix("sign-in.rate-limited|") })
        // Failed tokens on the API count the same way: past the limit, 429 before any check (the
        // bucket refills one try per 3 s, so a slow machine sees a few more 401s).
        var statuses: [Int] = []
        let started = Date()
        for _ in 0..<40 {
            statuses.append(try await HTTP.get(Self.report(server), token: "obt2.bad.token").status)
        }
        let refills = Int(Date().timeIntervalSince(started) / 3) + 1
        #expect(statuses.prefix(20).allSatisfy { $0 == 401 }, "\(statuses)")
        #expect(statuses.filter { $0 == 401 }.count <= 20 + refills, "\(statuses)")
        #expect(statuses.allSatisfy { $0 == 401 || $0 == 429 }, "\(statuses)")
        // A valid credential from that very address still passes: nobody behind a shared address
        // is locked out by someone else's failures.
        #expect(try await HTTP.get(Self.report(server), token: ann).status == 200)
    }

    /// Failures naming a person (their revoked credential) are limited per person: after ten, such
    /// failures answer 429 naming them, but their live credential is never refused for it.
    @Test func failuresInAPersonsNameNeverLockThemOut() async throws {
        let server = try ServerProcess()
        let old = try server.credential("ann", role: "viewer", app: "growth")
        let rotated = try server.command(["people", "rotate", "--name", "ann"])
        let current = rotated.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let script = """
            import http.client
            conn = http.client.HTTPConnection("127.0.0.1", \(server.port), source_address=("127.0.0.3", 0))
            out = []
            for i in range(14):
                conn.request("GET", "/v1/apps/growth/report", headers={"Authorization": "Bearer \(old)"})
                answer = conn.getresponse()
                body = answer.read().decode()
                out.append(str(answer.status) + ("+ann" if "from ann" in body else ""))
            print(" ".join(out))
            """
        let result = try Shell.run("/usr/bin/python3", ["-c", script])
        let statuses = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
            .map(String.init)
        #expect(statuses.prefix(9).allSatisfy { $0 == "401" }, "\(statuses)")
        #expect(statuses.suffix(4).allSatisfy { $0 == "429+ann" }, "\(statuses)")
        #expect(try await HTTP.get(Self.report(server), token: current).status == 200)
    }
}
