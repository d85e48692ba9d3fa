import AccountSync
import ArgumentParser
import Foundation
import Logging
import OnboardingServer
import PostgresNIO
import ServerControlPlane
import ServerDashboard
import ServerDatabase
import ServerSyncAPI
import ServerTokens
import TourCore

struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mint an account token for one app, signed with the signing key, and print it.",
        discussion: """
            People of the control plane have credentials of their own: onboarding-server people add. With \
            DATABASE_URL (or DATABASE_URL_FILE) set, the minting is one row of the audit trail.
            """)

    @Option(help: "The app the token is for (finite, lockedin, carrierwave, growth, moodtracker, ...).")
    var app: String?
    @Option(help: "The account the token reads and writes.")
    var account: String?
    @Flag(help: .hidden)
    var admin = false
    @Option(help: "How long it is valid, in days (1 to 3650).")
    var days = 30

    func run() async throws {
        if admin {
            throw ValidationError(
                """
                shared admin tokens are retired: each person has a credential of their own \
                (onboarding-server people add --name NAME --role ROLE --app APP)
                """
            )
        }
        guard let account, let app else {
            throw ValidationError(
                "an account token is for one account in one app: give --app APP --account ACCOUNT")
        }
        guard SyncAPI.isValidName(account) else {
            throw ValidationError("the account must be \(SyncAPI.nameRule)")
        }
        guard !Installs.isInstall(account) else {
            throw ValidationError(
                """
                account names starting with '\(Installs.subjectPrefix)' are installs' (they enroll \
                themselves); choose another name
                """
            )
        }
        guard SyncAPI.isValidName(app) else { throw ValidationError("the app must be \(SyncAPI.nameRule)") }
        guard (1...3650).contains(days) else { throw ValidationError("--days must be from 1 to 3650") }
        let now = Date().timeIntervalSince1970
        let claims = TokenClaims(
            subject: account, scope: .account, app: app, issuedAt: now,
            expires: Int64(now) + Int64(days) * 86_400)
        let signer = try secret()
        let token = await signer.sign(claims)
        let pseudonym = signer.subjectPseudonym(app: app, subject: account)
        if try Settings.secret("DATABASE_URL") != nil {
            let days = days
            try await DatabaseOptions().withClient { client, logger in
                try await AuditLog(client: client, logger: logger).record(
                    .init(
                        at: now, actor: .commandLine(), app: app, action: "token.minted", target: pseudonym,
                        details: ["days": .int(days)]))
            }
        }
        print(token)
    }
}

/// `sign-out`: refuses every token of an account issued until now ("sign out everywhere").
struct SignOutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-out",
        abstract: "Refuse every token of an account in an app issued until now (sign out everywhere).")

    @Option(help: "The app.")
    var app: String
    @Option(help: "The account.")
    var account: String
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        guard SyncAPI.isValidName(app), SyncAPI.isValidName(account) else {
            throw ValidationError("the app and the account must be \(SyncAPI.nameRule)")
        }
        let (app, account) = (app, account)
        // The audit row names the account by a keyed hash: the server's key ring is needed.
        let pseudonym = try secret().subjectPseudonym(app: app, subject: account)
        let cutoff = try await database.withClient { client, logger in
            let now = Date().timeIntervalSince1970
            return try await AccountStore(client: client, logger: logger).signOutEverywhere(
                app: app, account: account, named: pseudonym, at: now,
                audit: .init(
                    at: now, actor: .commandLine(), app: app, action: "account.signed-out", target: pseudonym)
            )
        }
        print("\(app)/\(account): tokens issued before \(Date(timeIntervalSince1970: cutoff)) are refused")
    }
}
