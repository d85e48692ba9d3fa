import AccountSync
import AccountSyncHTTP
import ArgumentParser
import Permissions
import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a command's device lives: its account server, database file, display budget, clock and
/// kind.
extension RunOptions {
    /// How this command reaches the account server, if it names one (`--server`, else
    /// `$ONBOARDING_SERVER`): as the signed-in account when `$ONBOARDING_TOKEN` holds its token, else
    /// as the install, with the product's enrollment key (Docs/Server.md, "Installs"; the install's
    /// credential is kept in `store`'s secret store, sealed under a key file beside the database).
    func syncTransport(store: DeviceStore?, databasePath: String?) throws -> (any SyncTransport)? {
        guard let text = server ?? Environment.value("ONBOARDING_SERVER").flatMap({ $0.isEmpty ? nil : $0 })
        else {
            return nil
        }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil
        else {
            throw CLIFailure.usage(
                "--server takes an http or https URL such as http://127.0.0.1:8080; got '\(text.quotable)'")
        }
        if let refusal = HTTPSyncTransport.refusal(toSendTokenTo: url) { throw CLIFailure.usage(refusal) }
        let token = Environment.value("ONBOARDING_TOKEN").flatMap { $0.isEmpty ? nil : $0 }
        let product = CLIEnvironment.current
        guard token != nil || product.enrollmentKey != nil else {
            throw CLIFailure.usage(
                """
                syncing with \(text) needs the account's token in ONBOARDING_TOKEN (onboarding-server token \
                --app \(product.catalog.app) --account \(user) mints one)
                """
            )
        }
        if try isOffline() { return NoNetwork(asInstall: token == nil) }
        if let token { return HTTPSyncTransport(server: url, token: Secret(token)) }
        guard let store, let enrollmentKey = product.enrollmentKey else { return NoNetwork(asInstall: true) }
        let keyFile = databasePath.flatMap { $0 == ":memory:" ? nil : $0 + ".secrets-key" }
        return InstallSyncTransport(
            server: url, enrollmentKey: enrollmentKey,
            store: store.installCredentials(app: product.catalog.app, keyFile: keyFile))
    }

    /// Whether this command syncs as a signed-in account (a server and a token): rollouts then
    /// draw by the account from this command on.
    func syncsAsAccount() -> Bool {
        (server ?? Environment.value("ONBOARDING_SERVER")).map { !$0.isEmpty } == true
            && Environment.value("ONBOARDING_TOKEN").map { !$0.isEmpty } == true
    }

    /// Whether neither --db nor $ONBOARDING_DB names the file.
    var usesDefaultDatabase: Bool {
        db == nil && (Environment.value("ONBOARDING_DB") ?? "").isEmpty
    }

    /// The database file: `--db`, else `$ONBOARDING_DB`, else `onboarding/APP.sqlite` in the XDG
    /// data directory (`$XDG_DATA_HOME` when it is an absolute path, as the XDG spec says, else
    /// `$HOME/.local/share`). Never a surprise: an empty `--db` is refused, and with neither an
    /// absolute `XDG_DATA_HOME` nor `HOME` there is no default (never the system's temp folder).
    func resolvedDatabasePath() throws -> String {
        if let db {
            guard !db.isEmpty else {
                throw CLIFailure.usage("--db is empty; give a file name, such as --db onboarding.sqlite")
            }
            return db
        }
        if let path = Environment.value("ONBOARDING_DB"), !path.isEmpty { return path }
        let base: String
        if let data = Environment.value("XDG_DATA_HOME"), data.hasPrefix("/") {
            base = data
        } else if let home = Environment.value("HOME"), !home.isEmpty {
            base = home + "/.local/share"
        } else {
            throw CLIFailure.usage(
                "no place for the database: HOME is not set and XDG_DATA_HOME is not an absolute path; "
                    + "give --db FILE or set ONBOARDING_DB")
        }
        return "\(base)/onboarding/\(CLIEnvironment.current.executable).sqlite"
    }

    /// The family's display budget: the file every product of the device shares it through
    /// (`ONBOARDING_BUDGET_DB`; unset: this product alone decides, as its seed says) and its limits
    /// (``DisplayBudget/family``, or `ONBOARDING_BUDGET=perDay=N,coolDown=SECONDS` or `off`).
    func familyBudget() throws -> FamilyBudget? {
        guard let path = Environment.value("ONBOARDING_BUDGET_DB"), !path.isEmpty else { return nil }
        var limits = DisplayBudget.family
        if let text = Environment.value("ONBOARDING_BUDGET"), !text.isEmpty {
            do {
                guard let parsed = try DisplayBudget.parse(text) else { return nil }
                limits = parsed
            } catch {
                throw CLIFailure.usage("ONBOARDING_BUDGET \(error.description)")
            }
        }
        do {
            return try FamilyBudget(path: path, limits: limits)
        } catch let error as StoreError {
            throw CLIFailure.storage(error)
        }
    }

    /// `ONBOARDING_BUDGET_EXCHANGE`: how many seconds old the display budget's last exchange with
    /// the server may be before an event that may start a flow exchanges again (a long session;
    /// default 300, from 0 to 86400).
    func budgetExchangeInterval() throws -> TimeInterval {
        guard let text = Environment.value("ONBOARDING_BUDGET_EXCHANGE"), !text.isEmpty else { return 300 }
        guard let seconds = Double(text), (0...86_400).contains(seconds) else {
            throw CLIFailure.usage(
                "ONBOARDING_BUDGET_EXCHANGE takes seconds from 0 to 86400; got '\(text.quotable)'")
        }
        return seconds
    }

    /// `ONBOARDING_CLOCK`: unset, empty or `wall` is the real clock; `virtual` a clock kept in the
    /// database that only `wait` moves. Anything else is refused.
    func resolvedTimeSource() throws -> TimeSource {
        switch Environment.value("ONBOARDING_CLOCK") ?? "" {
        case "", "wall": return .wall
        case "virtual": return .virtual(start: Self.virtualStart)
        case let other:
            throw CLIFailure.usage("ONBOARDING_CLOCK is wall or virtual; got '\(other.quotable)'")
        }
    }

    /// `ONBOARDING_DEVICE_KIND`: the kind of device the CLI stands in for (phone, tablet, mac, ...),
    /// said with each start it pushes so the dashboard can split journeys by it; unset: not said.
    func deviceKind() throws -> String? {
        guard let kind = Environment.value("ONBOARDING_DEVICE_KIND"), !kind.isEmpty else { return nil }
        guard StartContext.isDeviceKind(kind) else {
            throw CLIFailure.usage(
                """
                ONBOARDING_DEVICE_KIND is a lowercase word of 1 to \(StartContext.maximumLength) letters \
                (phone, tablet, mac); got '\(kind.quotable)'
                """
            )
        }
        return kind
    }
}
