import Foundation
import Testing

/// The harness and the bench run psql and other programs with database URLs: a password in one
/// goes to `PGPASSWORD`, never onto a command line that `ps` shows.
@Suite struct CommandLinePasswordTests {
    @Test func aURLsPasswordGoesToTheEnvironmentNotTheArguments() {
        let (arguments, environment) = passwordsMovedToEnvironment(
            [
                "postgres://onboarding:s3cret@127.0.0.1:5432/onboarding?target_session_attrs=read-write",
                "-qtAc", "SELECT 1",
            ],
            ["PATH": "/usr/bin"])
        #expect(
            arguments == [
                "postgres://onboarding@127.0.0.1:5432/onboarding?target_session_attrs=read-write", "-qtAc",
                "SELECT 1",
            ])
        #expect(!arguments.joined(separator: " ").contains("s3cret"))
        #expect(environment == ["PATH": "/usr/bin", "PGPASSWORD": "s3cret"])
    }

    @Test func aURLWithoutAPasswordIsLeftAsItIs() {
        let url = "postgres://onboarding@127.0.0.1:5432/onboarding"
        let (arguments, environment) = passwordsMovedToEnvironment([url, "-qc", "SELECT 1"], [:])
        #expect(arguments == [url, "-qc", "SELECT 1"])
        #expect(environment["PGPASSWORD"] == nil)
    }
}

/// A PostgreSQL URL's password moved off the command line (where `ps` shows it to everyone) into
/// `PGPASSWORD`, which libpq's programs (psql, pg_basebackup) read: the arguments without it, and
/// the environment with it. URLs without a password are left as they are.
func passwordsMovedToEnvironment(_ arguments: [String], _ environment: [String: String]) -> (
    [String], [String: String]
) {
    var environment = environment
    let arguments = arguments.map { argument -> String in
        guard argument.hasPrefix("postgres://") || argument.hasPrefix("postgresql://"),
            var components = URLComponents(string: argument), let password = components.password
        else { return argument }
        environment["PGPASSWORD"] = password
        components.password = nil
        return components.string ?? argument
    }
    return (arguments, environment)
}
