import Foundation
import OnboardingServer
import ServerTokens
import Testing
import TourCodec
import TourFixtures

extension ControlPlaneTests {
    /// A device without a token syncs as its install; while the server does not accept the app's
    /// enrollment key, `sync` says which command accepts it, and that command, as printed, works.
    /// With a token minted later, the same file syncs as the account.
    @Test func theHintForAnUnacceptedEnrollmentKeyNamesACommandThatWorks() throws {
        let server = try ServerProcess()
        let database = Scratch.folder.appendingPathComponent("hint-\(UUID().uuidString).sqlite")
        var environment = ProcessInfo.processInfo.environment
        environment["ONBOARDING_SERVER"] = server.url.absoluteString
        environment["ONBOARDING_TOKEN"] = nil
        let growth = BuiltExecutables.folder.appendingPathComponent("growth").path
        let result = try Shell.run(
            growth, ["sync", "--db", database.path, "--user", "ann"], environment: environment)
        #expect(result.status != 0)
        let hint = try #require(
            result.stderr.range(of: "(onboarding-server ").map { result.stderr[$0.upperBound...] })
        let command = hint.prefix { $0 != ")" }.replacingOccurrences(of: " accepts it", with: "")
        #expect(command.hasPrefix("enrollment-keys add --app growth growth-enroll-"), "\(result.stderr)")
        let accepted = try server.command(command.split(separator: " ").map(String.init))
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(
            try Shell.run(
                growth, ["launch", "--db", database.path, "--user", "ann"], environment: environment
            ).status == 0)
        let asInstall = try Shell.run(
            growth, ["sync", "--db", database.path, "--user", "ann"], environment: environment)
        #expect(asInstall.status == 0, "\(asInstall.stderr)")
        #expect(try server.sql("SELECT count(*) FROM installs WHERE app = 'growth'") == ["1"])
        let minted = try server.command(["token", "--app", "growth", "--account", "ann"])
        #expect(minted.status == 0, "\(minted.stderr)")
        environment["ONBOARDING_TOKEN"] = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let synced = try Shell.run(
            BuiltExecutables.folder.appendingPathComponent("growth").path,
            ["sync", "--db", database.path, "--user", "ann"],
            environment: environment)
        #expect(synced.status == 0, "\(synced.stderr)")
        // Signed in: the account heard the user's whole history, as at a first enrolment.
        #expect(
            try server.sql("SELECT count(*) FROM pushes WHERE app = 'growth' AND account = 'ann'")
                == server.sql("SELECT count(*) FROM pushes WHERE app = 'growth' AND account LIKE 'install.%'")
        )
        #expect(
            try server.sql("SELECT count(*) > 0 FROM pushes WHERE app = 'growth' AND account = 'ann'") == [
                "t"
            ])
    }
}
