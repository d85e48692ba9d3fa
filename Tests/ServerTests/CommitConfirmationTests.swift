import AccountSync
import Foundation
import Logging
import PostgresNIO
import ServerDatabase
import TestThreads
import Testing
import TourCodec
import TourFixtures

@testable import OnboardingServer

/// An acknowledgement means committed, at the moment PostgreSQL commits. A push's statement runs
/// in its own implicit transaction, which PostgreSQL commits only after it has sent the statement's
/// rows and completion: a commit failing there (a deferred constraint refusing, or the backend
/// terminated at that instant, as an operator's `pg_terminate_backend` once did in the fault
/// tests, losing a push answered 200) must never be answered 200. And a transaction whose `COMMIT`
/// PostgreSQL answers `ROLLBACK` (a statement of it failed and the error was caught) is not
/// reported committed.
@Suite("Acknowledged only once committed", .ownThread)
struct CommitConfirmationTests {
    /// Makes every commit that inserted into `pushes` meet the fault named in `test_commit_fault`:
    /// `refuse` (an error at commit), `terminate` (the backend terminated at commit), or `none`. With
    /// `only`, only rows of that account meet it.
    static func faultCommits(_ server: ServerProcess) throws {
        _ = try server.sql(
            """
            CREATE TABLE test_commit_fault (fault text NOT NULL, account text);
            INSERT INTO test_commit_fault VALUES ('none', NULL);
            CREATE FUNCTION test_commit_fault() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE chosen record;
            BEGIN
                SELECT * INTO chosen FROM test_commit_fault;
                IF chosen.account IS NOT NULL AND chosen.account <> NEW.account THEN RETURN NULL; END IF;
                IF chosen.fault = 'refuse' THEN RAISE EXCEPTION 'the test refuses this commit'; END IF;
                IF chosen.fault = 'terminate' THEN
                    PERFORM pg_terminate_backend(pg_backend_pid());
                    PERFORM pg_sleep(5);
                END IF;
                RETURN NULL;
            END $$;
            CREATE CONSTRAINT TRIGGER test_commit_fault AFTER INSERT ON pushes DEFERRABLE INITIALLY DEFERRED
                FOR EACH ROW EXECUTE FUNCTION test_commit_fault();
            """)
    }

    static func fault(_ server: ServerProcess, _ fault: String, only account: String? = nil) throws {
        let chosen = account.map { "'\($0)'" } ?? "NULL"
        _ = try server.sql("UPDATE test_commit_fault SET fault = '\(fault)', account = \(chosen)")
    }

    static func stored(_ server: ServerProcess, _ account: String) throws -> Int {
        Int(try server.sql("SELECT count(*) FROM pushes WHERE account = '\(account)'").first ?? "") ?? -1
    }

    /// One push at a time (the statement of one push), its commit refused, then its backend
    /// terminated at commit: never 200, nothing stored; sent again once the fault is gone, stored once.
    @Test(arguments: ["refuse", "terminate"])
    func aPushWhoseCommitFailsIsNotAcknowledged(fault: String) async throws {
        let server = try ServerProcess(serveOptions: ["--push-writers", "1"])
        try Self.faultCommits(server)
        let account = "solo-\(fault)"
        let token = try server.token(account: account)
        try Self.fault(server, fault)
        let answer = try await LoadSheddingTests.push(server, account: account, token: token)
        let storedThen = try Self.stored(server, account)
        #expect(answer.status != 200, "a push whose commit met '\(fault)' was answered 200")
        #expect(answer.status == 503, "answered \(answer.status) \(answer.errorCode ?? "")")
        #expect(answer.retryAfter != nil)
        #expect(storedThen == 0)
        try Self.fault(server, "none")
        let again = try await LoadSheddingTests.pushUntilAccepted(server, account: account, token: token)
        let storedNow = try Self.stored(server, account)
        #expect(again.status == 200, "answered \(again.status) \(again.errorCode ?? "")")
        #expect(storedNow == 1)
    }

    /// Pushes of many accounts at once, written together in one statement, and one account's row
    /// refused at commit: every push answered 200 is stored, and none that was not answered 200
    /// is (the refused commit takes its whole batch with it).
    @Test(arguments: ["refuse", "terminate"])
    func aBatchWhoseCommitFailsAcknowledgesNone(fault: String) async throws {
        let server = try ServerProcess(serveOptions: ["--push-writers", "1"])
        try Self.faultCommits(server)
        let accounts = (0..<12).map { "many-\(fault)-\($0)" }
        var made: [String: String] = [:]
        for account in accounts { made[account] = try server.token(account: account) }
        let tokens = made
        try Self.fault(server, fault, only: accounts[5])
        let answers = try await withThrowingTaskGroup(of: (String, Int).self) { group in
            for account in accounts {
                group.addTask {
                    (
                        account,
                        try await LoadSheddingTests.push(
                            server, account: account, token: tokens[account] ?? ""
                        ).status
                    )
                }
            }
            return try await group.reduce(into: [String: Int]()) { $0[$1.0] = $1.1 }
        }
        for account in accounts {
            let stored = try Self.stored(server, account)
            let status = answers[account] ?? 0
            #expect(
                status == 200 ? stored == 1 : stored == 0,
                "\(account): answered \(status), stored \(stored) times")
        }
        #expect(answers[accounts[5]] != 200)
        try Self.fault(server, "none")
        for account in accounts {
            let again = try await LoadSheddingTests.pushUntilAccepted(
                server, account: account, token: tokens[account] ?? "")
            let stored = try Self.stored(server, account)
            #expect(again.status == 200, "\(account): answered \(again.status)")
            #expect(stored == 1, "\(account): stored \(stored) times")
        }
    }

    /// A transaction body that catches a statement's error goes on in a transaction PostgreSQL has
    /// already failed; its `COMMIT` is answered `ROLLBACK`, and the write reports that, not success.
    @Test func aCommitAnsweredRollbackIsNotASuccess() async throws {
        try await TestPostgres.withClient(migrated: false) { client, logger, _ in
            // Patient bounds: the subject is the rollback's answer, not a bound the suite's load can pass.
            let database = WritableDatabase(client: client, logger: logger, bounds: .patient)
            _ = try await database.write { connection, logger in
                _ = try await connection.query("CREATE TABLE kept (n int NOT NULL)", logger: logger)
            }
            var outcome: Result<Int, any Error> = .success(0)
            do {
                outcome = .success(
                    try await database.write { connection, logger in
                        _ = try await connection.query("INSERT INTO kept VALUES (1)", logger: logger)
                        // The error is caught; the transaction is failed all the same.
                        _ = try? await connection.query("SELECT 1 / 0", logger: logger)
                        return 1
                    })
            } catch {
                outcome = .failure(error)
            }
            let described: String
            switch outcome {
            case .success(let value): described = "succeeded with \(value)"
            case .failure(let error): described = String(describing: error)
            }
            #expect(described.contains("ROLLBACK"), "the write \(described)")
            var rows = 0
            for try await _ in try await client.query("SELECT n FROM kept", logger: logger) { rows += 1 }
            #expect(rows == 0)
            // A body that does not fail still commits, through the same statement.
            _ = try await database.write { connection, logger in
                _ = try await connection.query("INSERT INTO kept VALUES (2)", logger: logger)
            }
            var after = 0
            for try await _ in try await client.query("SELECT n FROM kept", logger: logger) { after += 1 }
            #expect(after == 1)
        }
    }
}
