import AccountSync
import Foundation
import TestThreads
import Testing
import TourCodec

/// Separation of duties (Docs/Security.md): migrations run as the database's owner, the server as a
/// role that may read and write rows but not change the schema nor rewrite the audit trail. Such a
/// server starts, serves pushes and audits, and its role cannot change an audit row.
@Suite("The server as a least-privilege role", .ownThread)
struct LeastPrivilegeTests {
    @Test func aServerWhoseRoleCannotChangeTheSchemaStartsServesAndCannotRewriteTheAuditTrail() async throws {
        let ownerURL = try TestPostgres.freshDatabase()
        // The owner migrates.
        let owner = try ServerProcess(databaseURL: ownerURL)
        owner.stop()

        let role = "srv_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let grants = """
            CREATE ROLE \(role) LOGIN;
            GRANT USAGE ON SCHEMA public TO \(role);
            GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \(role);
            GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO \(role);
            REVOKE UPDATE, DELETE, TRUNCATE ON audit_log FROM \(role);
            """
        let granted = try Shell.run(
            TestPostgres.psql, [ownerURL, "-qtA", "-v", "ON_ERROR_STOP=1", "-c", grants])
        #expect(granted.status == 0, "\(granted.stderr)")
        let roleURL = ownerURL.replacingOccurrences(
            of: #"//[^@/]+@"#, with: "//\(role)@", options: .regularExpression)
        #expect(roleURL != ownerURL)

        // Started as the role: ready, it takes a push, and a sign-out by staff is audited.
        let server = try ServerProcess(databaseURL: roleURL)
        #expect(try await HTTP.get(server.url.appendingPathComponent("v1/ready")).status == 200)
        let token = try server.token(account: "ann")
        let item = PushBatchingTests.item(1, flow: "tour", standing: .completed, device: "phone")
        let pushed = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/growth/accounts/ann/push"), token: token,
            body: Data(try PushBatch(device: "phone", items: [item]).tourValue.jsonUTF8()))
        #expect(pushed.status == 200, "\(String(decoding: pushed.body, as: UTF8.self))")
        let owned = try server.operatorCredential()
        let signOut = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/growth/accounts/ann/sign-out"), token: owned,
            body: Data())
        #expect(signOut.status == 200, "\(String(decoding: signOut.body, as: UTF8.self))")
        #expect(try server.sql("SELECT count(*) FROM audit_log WHERE action = 'account.signed-out'") == ["1"])
        // The background jobs run as the role too: the insights' count (a report waits for it).
        let report = try await HTTP.counted(
            server.url.appendingPathComponent("v1/apps/growth/report"), token: owned)
        #expect(report.status == 200, "\(String(decoding: report.body, as: UTF8.self))")
        #expect(
            try server.sql("SELECT count(*) FROM insight_firsts") != ["0"],
            "the insights' job counted nothing")

        // The role cannot rewrite the trail, nor change the schema.
        for statement in [
            "UPDATE audit_log SET action = 'nothing'", "DELETE FROM audit_log", "CREATE TABLE t (x int)",
        ] {
            let refused = try Shell.run(TestPostgres.psql, [roleURL, "-qtAc", statement])
            #expect(
                refused.status != 0 && refused.stderr.contains("permission denied"),
                "\(statement): \(refused.stderr)")
        }
        server.stop()
        let log = try String(contentsOf: server.log, encoding: .utf8)
        // PostgreSQL's refusal of a privilege, in the words it says it (a bare "42501" can be part
        // of a request id).
        let refused = log.split(separator: "\n").filter {
            $0.contains("permission denied") || $0.contains("sqlState: 42501")
        }
        #expect(refused.isEmpty, "a permission was refused: \(refused.prefix(3))")
    }
}
