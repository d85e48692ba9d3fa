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
