import AccountSync
import CatalogDocuments
import Foundation
import TestThreads
import Testing
import TourCodec
import TourFixtures

/// Every write the server acknowledges, with PostgreSQL held at the moment of its commit (a
/// deferred trigger sleeping at `COMMIT`, as a synchronous standby that does not answer holds a
/// commit and no timeout of PostgreSQL's ends): the answer always says what the database did.
/// Held past the server's wait for the commit, the answer is 503 `commit_unconfirmed` (never "not
/// done"); the change lands, and the same request sent again with its `Idempotency-Key` gets the
/// first answer and changes nothing twice, a credential shown once included. A commit PostgreSQL
/// refuses is answered as not done, and nothing of it is stored.
@Suite("Writes answered with what their commit did", .ownThread)
struct WriteAtCommitTests {
    /// A write of the API: how to send it (with a key and an optional alteration of its body),
    /// and a query that counts what it leaves in the database.
    struct Write {
        var name: String
        var send: @Sendable (_ key: String?, _ altered: Bool) async throws -> HTTP.Answer
        var effect: String
        var done: String
        /// What the first answer carries that only it could carry.
        var carries: [String] = []
    }

    /// Makes every commit that writes `audit_log`, `installs` or `token_cutoffs` sleep for the
    /// seconds in `test_hold` (a negative number refuses the commit instead).
    static func holdCommits(_ server: ServerProcess) throws {
        _ = try server.sql(
            """
            CREATE TABLE test_hold (seconds float8 NOT NULL); INSERT INTO test_hold VALUES (0);
            CREATE FUNCTION test_hold_commit() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE wait float8;
            BEGIN
                SELECT seconds INTO wait FROM test_hold;
                IF wait < 0 THEN RAISE EXCEPTION 'the test refuses this commit'; END IF;
                PERFORM pg_sleep(wait);
                RETURN NULL;
            END $$;
            CREATE CONSTRAINT TRIGGER test_hold_commit AFTER INSERT ON audit_log DEFERRABLE INITIALLY DEFERRED
                FOR EACH ROW EXECUTE FUNCTION test_hold_commit();
            CREATE CONSTRAINT TRIGGER test_hold_commit AFTER INSERT ON installs DEFERRABLE INITIALLY DEFERRED
                FOR EACH ROW EXECUTE FUNCTION test_hold_commit();
            CREATE CONSTRAINT TRIGGER test_hold_commit AFTER INSERT OR UPDATE ON token_cutoffs DEFERRABLE \
            INITIALLY DEFERRED
                FOR EACH ROW EXECUTE FUNCTION test_hold_commit();
            """)
    }

    static func hold(_ server: ServerProcess, _ seconds: Double) throws {
        _ = try server.sql("UPDATE test_hold SET seconds = \(seconds)")
    }

    /// Each write held 5 s at its commit (the server waits 2 s for a commit's confirmation; the
    /// margin is for a loaded machine's late timer).
    static func heldAtCommit(_ server: ServerProcess, _ write: Write) async throws {
        let key = UUID().uuidString
        try hold(server, 5)
        let first = try await write.send(key, false)
        try hold(server, 0)
        #expect(
            first.status == 503,
            """
            \(write.name): held at commit, \
            answered \(first.status) \(String(decoding: first.body, as: UTF8.self))
            """
        )
        #expect(first.errorCode == "commit_unconfirmed", "\(write.name): \(first.errorCode ?? "no code")")
        #expect(first.retryAfter != nil)
        // The commit lands once the hold ends: the 503 said "may have", and it did.
        let landed = try await Patience.untilAnswered({ () async throws -> Bool in
            try server.sql(write.effect) == [write.done]
        }) { !$0 }
        let effect = try server.sql(write.effect)
        #expect(landed, "\(write.name): the held commit did not land: \(effect)")
        // Sent again with its key: the first answer, nothing changed twice.
        let again = try await write.send(key, false)
        #expect(
            (200..<300).contains(again.status),
            "\(write.name): \(again.status) \(String(decoding: again.body, as: UTF8.self))")
        #expect(again.replayed == "true", "\(write.name): the answer was not the first one given again")
        for member in write.carries {
            #expect(again.json[member] != nil, "\(write.name): the first answer's \(member) is lost")
        }
        #expect(try server.sql(write.effect) == [write.done], "\(write.name): changed twice")
        // The same key with another request is refused, and changes nothing.
        let reused = try await write.send(key, true)
        #expect(reused.status == 422, "\(write.name): \(reused.status)")
        #expect(reused.errorCode == "idempotency_key_reused")
        #expect(try server.sql(write.effect) == [write.done])
    }

    @Test func publishingAndKeysHeldAtCommit() async throws {
        let server = try ServerProcess()
        let owner = try server.credential("olga", role: "owner", app: "lockedin")
        _ = try PublishingTests.registerCompiled(on: server)
        let keyFile = try server.publicationKey(app: "lockedin")
        let v2 = try PublishingTests.reworded(try PublishingTests.compiledDocument())
        try Self.holdCommits(server)
        let catalogs = server.url.appendingPathComponent("v1/apps/lockedin/catalogs")
        let signing = try PublicationSigningKey(fileText: String(contentsOfFile: keyFile, encoding: .utf8))
        let signature = try signing.sign(document: try CatalogDocument(text: v2).text())

        try await Self.heldAtCommit(
            server,
            Write(
                name: "publish",
                send: { key, altered in
                    let body = try TourValue.members([
                        "document": try TourValue(jsonText: v2), "rollout": .int(altered ? 30 : 20),
                        "signatures": [signature].tourValue,
                    ]).jsonUTF8()
                    return try await HTTP.send(
                        "POST", catalogs, token: owner, body: Data(body),
                        headers: key.map { ["Idempotency-Key": $0] } ?? [:])
                },
                effect:
                    """
                    SELECT count(*) || ' ' || min(rollout) FROM catalogs WHERE app = 'lockedin' AND \
                    version = 2
                    """,
                done: "1 20", carries: ["publication"]))
        try await Self.heldAtCommit(
            server,
            Write(
                name: "withdraw",
                send: { key, altered in
                    try await HTTP.send(
                        "DELETE", catalogs.appendingPathComponent(altered ? "3" : "2"), token: owner,
                        body: nil,
                        headers: key.map { ["Idempotency-Key": $0] } ?? [:])
                },
                effect:
                    """
                    SELECT count(*) FROM catalogs WHERE app = 'lockedin' AND version = 2 AND \
                    withdrawn_at IS NOT NULL
                    """,
                done: "1", carries: ["publication"]))

        let folder = Scratch.folder.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let made = try server.command(["keys", "new", "--app", "lockedin", "--out", folder.path])
        let id = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let publicKey = try #require(
            try TourValue(
                jsonText: String(contentsOf: folder.appendingPathComponent("\(id).json"), encoding: .utf8)
            ).objectValue?["publicKey"]?
            .stringValue)
        let keys = server.url.appendingPathComponent("v1/apps/lockedin/keys")
        try await Self.heldAtCommit(
            server,
            Write(
                name: "key register",
                send: { key, altered in
                    try await HTTP.send(
                        "POST", keys, token: owner,
                        body: Data(
                            try TourValue.members([
                                "publicKey": .string(altered ? "AAAA" + publicKey.dropFirst(4) : publicKey)
                            ]).jsonUTF8()),
                        headers: key.map { ["Idempotency-Key": $0] } ?? [:])
                },
                effect: "SELECT count(*) FROM publication_keys WHERE app = 'lockedin' AND key_id = '\(id)'",
                done: "1",
                carries: ["key"]))
        try await Self.heldAtCommit(
            server,
            Write(
                name: "key retire",
                send: { key, altered in
                    try await HTTP.send(
                        "DELETE", keys.appendingPathComponent(altered ? "other" : id), token: owner,
                        body: nil,
                        headers: key.map { ["Idempotency-Key": $0] } ?? [:])
                },
                effect:
                    "SELECT count(*) FROM publication_keys WHERE key_id = '\(id)' AND retired_at IS NOT NULL",
                done: "1",
                carries: ["retiredAt"]))

        // Without a key the 503 says it may have happened, and how to make sending it again safe.
        try Self.hold(server, 5)
        let unkeyed = try await HTTP.send(
            "POST", keys, token: owner,
            body: Data(
                try TourValue.members(["publicKey": .string(try Self.newPublicKey(server))]).jsonUTF8()))
        try Self.hold(server, 0)
        #expect(unkeyed.errorCode == "commit_unconfirmed", "\(unkeyed.status) \(unkeyed.errorCode ?? "")")
        #expect(String(decoding: unkeyed.body, as: UTF8.self).contains("Idempotency-Key"))
        let landed = try await Patience.untilAnswered({ () async throws -> Bool in
            try server.sql("SELECT count(*) FROM publication_keys WHERE app = 'lockedin'") == ["3"]
        }) { !$0 }
        #expect(landed, "the unconfirmed commit did not land")

        // A commit PostgreSQL refuses: an error answer, and nothing of it stored.
        try Self.hold(server, -1)
        let refused = try await HTTP.send(
            "POST", keys, token: owner,
            body: Data(
                try TourValue.members(["publicKey": .string(try Self.newPublicKey(server))]).jsonUTF8()))
        try Self.hold(server, 0)
        #expect(!(200..<300).contains(refused.status), "a refused commit was answered \(refused.status)")
        #expect(try server.sql("SELECT count(*) FROM publication_keys WHERE app = 'lockedin'") == ["3"])
    }

    @Test func peopleHeldAtCommitKeepTheCredentialShownOnce() async throws {
        let server = try ServerProcess()
        let owner = try server.credential("olga", role: "owner", app: "growth")
        try Self.holdCommits(server)
        let people = server.url.appendingPathComponent("v1/apps/growth/people")
        try await Self.heldAtCommit(
            server,
            Write(
                name: "people grant",
                send: { key, altered in
                    try await HTTP.send(
                        "PUT", people.appendingPathComponent("nina"), token: owner,
                        body: Data(
                            try TourValue.members(["role": .string(altered ? "editor" : "viewer")]).jsonUTF8()
                        ),
                        headers: key.map { ["Idempotency-Key": $0] } ?? [:])
                },
                effect: "SELECT count(*) || ' ' || min(role) FROM person_roles WHERE person = 'nina'",
                done: "1 viewer",
                carries: ["credential"]))
        try await Self.heldAtCommit(
            server,
            Write(
                name: "end sessions",
                send: { key, altered in
                    try await HTTP.send(
                        "POST",
                        people.appendingPathComponent(altered ? "olga" : "nina").appendingPathComponent(
                            "end-sessions"),
                        token: owner, body: nil, headers: key.map { ["Idempotency-Key": $0] } ?? [:])
                },
                effect: "SELECT count(*) FROM audit_log WHERE action = 'sessions.ended' AND target = 'nina'",
                done: "1",
                carries: ["sessionsEnded"]))
        try await Self.heldAtCommit(
            server,
            Write(
                name: "people remove",
                send: { key, altered in
                    try await HTTP.send(
                        "DELETE", people.appendingPathComponent(altered ? "olga" : "nina"), token: owner,
                        body: nil,
                        headers: key.map { ["Idempotency-Key": $0] } ?? [:])
                },
                effect: "SELECT count(*) FROM people WHERE name = 'nina'", done: "0", carries: ["removedFrom"]
            ))
    }

    @Test func enrollmentSignOutAndErasureHeldAtCommit() async throws {
        let server = try ServerProcess()
        let enrollmentKey = try server.acceptEnrollments(of: "moodtracker")
        let owner = try server.credential("olga", role: "owner", app: "growth")
        let phone = try Device("growth", account: "erin", server: server)
        try phone.run("do", "completeOnboarding")
        #expect(try phone.waiting() == 0)
        let token = try server.token(account: "ann")
        try Self.holdCommits(server)
        try await Self.heldAtCommit(
            server,
            Write(
                name: "enrollment",
                send: { key, altered in
                    try await HTTP.send(
                        "POST", server.url.appendingPathComponent("v1/apps/moodtracker/installs"), token: nil,
                        body: Data(
                            try TourValue.members([
                                "enrollmentKey": .string(altered ? enrollmentKey + "x" : enrollmentKey)
                            ]).jsonUTF8()),
                        headers: key.map { ["Idempotency-Key": $0] } ?? [:])
                },
                effect: "SELECT count(*) FROM installs WHERE app = 'moodtracker'", done: "1",
                carries: ["install", "credential"]))
        try await Self.heldAtCommit(
            server,
            Write(
                name: "sign-out",
                send: { key, altered in
                    try await HTTP.send(
                        "POST", server.url.appendingPathComponent("v1/apps/growth/accounts/ann/sign-out"),
                        token: token,
                        body: Data(altered ? "{}".utf8 : "".utf8),
                        headers: key.map { ["Idempotency-Key": $0] } ?? [:])
                },
                effect: "SELECT count(*) FROM token_cutoffs WHERE app = 'growth' AND account LIKE 'hmac:%'",
                done: "1",
                carries: ["tokensIssuedBefore"]))
        try await Self.heldAtCommit(
            server,
            Write(
                name: "erasure",
                send: { key, altered in
                    try await HTTP.send(
                        "DELETE",
                        server.url.appendingPathComponent(
                            "v1/apps/growth/accounts/\(altered ? "ann" : "erin")"), token: owner,
                        body: nil, headers: key.map { ["Idempotency-Key": $0] } ?? [:])
                },
                effect: "SELECT count(*) FROM pushes WHERE account = 'erin'", done: "0", carries: ["removed"])
        )
    }

    static func newPublicKey(_ server: ServerProcess) throws -> String {
        let folder = Scratch.folder.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let id = try server.command(["keys", "new", "--app", "lockedin", "--out", folder.path]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return try #require(
            try TourValue(
                jsonText: String(contentsOf: folder.appendingPathComponent("\(id).json"), encoding: .utf8)
            ).objectValue?["publicKey"]?
            .stringValue)
    }
}
