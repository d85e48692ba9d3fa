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

/// What every command takes, as plain values: `CommonOptions` (the argument parser) reads them for
/// every command, `QuickParse` for the commonest one-shot lines without the argument parser, and
/// the runner works from them.
struct RunOptions: Equatable {
    var db: String?
    var user = "default"
    var json = false
    var permissions: [String] = []
    var answers: [String] = []
    var offline = false
    var server: String?
    var context: [String] = []
    var locale: String?
    /// `--analytics on|off`: the device's consent, kept in the file from this command on.
    var analytics: String?

    /// The options that differ from their defaults, as they would be typed: `["--user u1", "--json"]`.
    var given: [String] {
        var words: [String] = []
        if let db { words.append("--db \(db)") }
        if user != "default" { words.append("--user \(user)") }
        if json { words.append("--json") }
        words += permissions.map { "--permission \($0)" } + answers.map { "--answer \($0)" }
        if offline { words.append("--offline") }
        if let server { words.append("--server \(server)") }
        words += context.map { "--context \($0)" }
        if let locale { words.append("--locale \(locale)") }
        if let analytics { words.append("--analytics \(analytics)") }
        return words
    }

    func validate() throws {
        // Byte by byte, not a regular expression: Foundation's regex engine (ICU) costs a one-shot
        // command more start-up time than all of its own work.
        let allowed = user.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
        guard allowed, (1...64).contains(user.utf8.count) else {
            throw ValidationError(
                "--user must be 1 to 64 letters, digits, '.', '_' or '-'; got '\(user.quotable)'")
        }
        _ = try permissionMap(permissions, option: "--permission")
        _ = try answerMaps()
        _ = try deviceFacts()
        _ = try requestedLocale()
        if let analytics, !["on", "off"].contains(analytics) {
            throw ValidationError("--analytics takes on or off; got '\(analytics.quotable)'")
        }
    }

    /// The locale the cards are shown in: `--locale` (refused when it is not a tag), else the one
    /// an earlier command asked for on this device (`remembered`), else the POSIX environment's
    /// (`LC_ALL`, `LC_MESSAGES`, `LANG`; `C`, `POSIX` and values that are not tags ask for none).
    /// Nil: the catalog's source locale.
    func requestedLocale(remembered: LocaleTag? = nil) throws -> (locale: LocaleTag, explicit: Bool)? {
        if let locale {
            guard let tag = LocaleTag(locale) else {
                throw ValidationError(
                    """
                    --locale takes a language tag such as en, pt or pt-BR; got '\(locale.quotable)'. \
                    \(Self.localeHelp)
                    """
                )
            }
            return (tag, true)
        }
        if let remembered { return (remembered, true) }
        let environment = LocaleTag.fromEnvironment(["LC_ALL", "LC_MESSAGES", "LANG"].map(Environment.value))
        return environment.map { ($0, false) }
    }

    /// "Texts: en (source), pt-BR."
    static var localeHelp: String {
        CLIEnvironment.current.text("localeHelp") {
            let strings = CLIEnvironment.current.catalog.strings
            let locales = strings.locales.map { $0 == strings.source ? "\($0) (source)" : $0.rawValue }
            return "\(CLIEnvironment.current.displayName)'s texts: \(locales.joined(separator: ", "))."
        }
    }

    /// `--context`, checked against the product's declared device facts.
    func deviceFacts() throws -> [String: TourValue] {
        var pairs: [(key: String, value: String)] = []
        for pair in context {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(
                String.init)
            guard parts.count == 2, !parts[0].isEmpty else {
                throw ValidationError(
                    "--context takes KEY=VALUE; got '\(pair.quotable)'. \(Self.contextHelp)")
            }
            pairs.append((parts[0], parts[1]))
        }
        do {
            return try CLIEnvironment.current.declarations.deviceFacts(
                pairs, product: CLIEnvironment.current.displayName)
        } catch {
            throw ValidationError("--context: \(error.description)")
        }
    }

    /// Whether the device is offline: `--offline`, or `--context online=false`.
    func isOffline() throws -> Bool { try offline || deviceFacts()["online"] == .bool(false) }

    /// What syncing does for this product: every product's journal feeds the server's reports and
    /// its events count in the account's display budget; only some have flows whose record is the
    /// account's.
    static var serverHelp: String {
        CLIEnvironment.current.text("serverHelp") {
            let product = CLIEnvironment.current
            let accountFlows = product.catalog.flows.filter { $0.scope == .user }.map { "\($0.id)" }
            let records =
                accountFlows.isEmpty
                ? "\(product.displayName) has no flow whose record is the account's"
                : """
                the account's records of \(accountFlows.joined(separator: ", ")) follow the user across \
                devices
                """
            return
                """
                The account server (default: $ONBOARDING_SERVER; the account's token comes from \
                $ONBOARDING_TOKEN): the journal is pushed for the server's reports, \
                the display budget is shared with the account's other devices, and \(records).
                """
        }
    }

    static var contextHelp: String {
        CLIEnvironment.current.text("contextHelp") {
            let keys = CLIEnvironment.current.declarations.deviceKeys
            guard !keys.isEmpty else { return "\(CLIEnvironment.current.displayName) reads no device facts." }
            return "KEY: "
                + keys.map {
                    "\($0.name) (\($0.example), default \($0.kind.text($0.defaultValue)): \($0.summary))"
                }
                .joined(separator: "; ") + "."
        }
    }

    static var contextPairs: [String] {
        guard let declarations = CLIEnvironment.product?.declarations else { return [] }
        return declarations.deviceKeys.flatMap { key -> [String] in
            key.kind == .flag
                ? ["\(key.name)=true", "\(key.name)=false"]
                : key.allowed.map { $0.map { "\(key.name)=\($0)" } } ?? ["\(key.name)="]
        }
    }

    static var catalog: TourCatalog { CLIEnvironment.current.catalog }

    /// `NAME=STATUS` completions: the product's permissions (and request gates) with each status.
    static func pairs(statuses: [String], gates: Bool) -> [String] {
        guard let catalog = CLIEnvironment.product?.catalog else { return [] }
        let permissions = catalog.permissions.flatMap { name in statuses.map { "\(name.rawValue)=\($0)" } }
        let requests =
            gates
            ? catalog.requestGates.flatMap { gate in requestStatuses.map { "\(gate)=\($0.rawValue)" } } : []
        return permissions + requests
    }

    static var permissionHelp: String {
        CLIEnvironment.current.text("permissionHelp") { makePermissionHelp() }
    }

    private static func makePermissionHelp() -> String {
        let names = catalog.permissions.map(\.rawValue)
        return names.isEmpty
            ? "\(CLIEnvironment.current.displayName) asks for no permissions."
            : """
            NAME: \(names.joined(separator: ", ")); STATUS: \
            \(PermissionStatus.allCases.map(\.rawValue).joined(separator: ", ")).
            """
    }

    static var answerHelp: String {
        CLIEnvironment.current.text("answerHelp") { makeAnswerHelp() }
    }

    private static func makeAnswerHelp() -> String {
        var parts: [String] = []
        if !catalog.permissions.isEmpty {
            parts.append(
                "Permissions \(catalog.permissions.map(\.rawValue).joined(separator: ", ")): "
                    + PermissionStatus.allCases.map(\.rawValue).joined(separator: ", ") + ".")
        }
        for gate in catalog.requestGates {
            parts.append("\(gate): \(Self.requestStatuses.map(\.rawValue).joined(separator: ", ")).")
        }
        return parts.isEmpty
            ? "\(CLIEnvironment.current.displayName) asks for nothing." : parts.joined(separator: " ")
    }

    /// What a request (a connection attempt) can come back with.
    static let requestStatuses: [GateStatus] = [.granted, .denied, .unavailable]

    /// `--answer`, split into the permissions' answers and the request gates' answers.
    func answerMaps() throws -> (
        permissions: [PermissionName: PermissionStatus], requests: [String: GateStatus]
    ) {
        let gates = Set(Self.catalog.requestGates)
        let permissionPairs = answers.filter { !gates.contains(Self.name(of: $0)) }
        var requests: [String: GateStatus] = [:]
        for pair in answers where gates.contains(Self.name(of: pair)) {
            let value = String(pair.dropFirst(Self.name(of: pair).count + 1))
            guard let status = GateStatus(rawValue: value), Self.requestStatuses.contains(status) else {
                throw ValidationError(
                    """
                    --answer \(Self.name(of: pair)) takes one of \
                    \(Self.requestStatuses.map(\.rawValue).joined(separator: ", ")); got '\(value.quotable)'
                    """
                )
            }
            requests[Self.name(of: pair)] = status
        }
        return (
            try permissionMap(permissionPairs, option: "--answer", requestGates: Self.catalog.requestGates),
            requests
        )
    }

    private static func name(of pair: String) -> String {
        String(pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }
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

    /// Where a virtual clock starts: Monday 5 January 2026, 09:00 UTC.
    static let virtualStart = Date(timeIntervalSince1970: 1_767_603_600)

    func permissionMap(_ pairs: [String], option: String, requestGates: [String] = []) throws
        -> [PermissionName: PermissionStatus]
    {
        let known = Self.catalog.permissions
        var map: [PermissionName: PermissionStatus] = [:]
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            let names = known.map(\.rawValue) + requestGates
            guard let name = parts.first, known.contains(PermissionName(rawValue: name)) else {
                throw ValidationError(
                    names.isEmpty
                        ? """
                        \(option): \(CLIEnvironment.current.displayName) asks for no permissions; \
                        got '\(pair.quotable)'
                        """
                        : "\(option) NAME is one of \(names.joined(separator: ", ")); got '\(pair.quotable)'")
            }
            guard parts.count == 2, let status = PermissionStatus(rawValue: parts[1]) else {
                throw ValidationError(
                    """
                    \(option) takes NAME=STATUS with STATUS one of \
                    \(PermissionStatus.allCases.map(\.rawValue).joined(separator: ", ")); \
                    got '\(pair.quotable)'
                    """
                )
            }
            map[PermissionName(rawValue: name)] = status
        }
        return map
    }
}

/// The process's environment variables, one at a time (`getenv`): `ProcessInfo.environment` builds
/// a dictionary of every variable on each call, which cost a one-shot command more than its reads.
enum Environment {
    static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
