import ArgumentParser
import Foundation
import TourRuntime

/// Options every command takes.
struct CommonOptions: ParsableArguments {
    @Option(
        help:
            "The SQLite database file (default: $ONBOARDING_DB, else a per-product file in the XDG data directory)."
    )
    var db: String?

    @Option(help: "The user the onboarding belongs to.")
    var user: String = "default"

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @Option(
        name: .customLong("permission"),
        help:
            "A permission's status before any request, NAME=STATUS (screenTime, health; notDetermined, granted, denied, restricted). Repeatable."
    )
    var permissions: [String] = []

    @Option(
        name: .customLong("answer"),
        help:
            "What the user answers when a permission is requested, NAME=STATUS. Repeatable. Default: granted."
    )
    var answers: [String] = []

    @Flag(help: "The device has no network: connection attempts and profile writes fail as offline.")
    var offline = false

    func validate() throws {
        guard user.range(of: #"^[A-Za-z0-9._-]{1,64}$"#, options: .regularExpression) != nil else {
            throw ValidationError(
                "--user must be 1 to 64 letters, digits, '.', '_' or '-'; got '\(user.quotable)'")
        }
        _ = try permissionMap(permissions, option: "--permission")
        _ = try permissionMap(answers, option: "--answer")
    }

    /// Whether neither --db nor $ONBOARDING_DB names the file.
    var usesDefaultDatabase: Bool {
        db == nil && (ProcessInfo.processInfo.environment["ONBOARDING_DB"] ?? "").isEmpty
    }

    var databasePath: String {
        if let db { return db }
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["ONBOARDING_DB"], !path.isEmpty { return path }
        let base =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSTemporaryDirectory()) + "/.local/share"
        return "\(base)/onboarding/\(CLIEnvironment.current.executable).sqlite"
    }

    var timeSource: TimeSource {
        ProcessInfo.processInfo.environment["ONBOARDING_CLOCK"] == "virtual"
            ? .virtual(start: Self.virtualStart) : .wall
    }

    /// Where a virtual clock starts: Monday 5 January 2026, 09:00 UTC.
    static let virtualStart = Date(timeIntervalSince1970: 1_767_603_600)

    func permissionMap(_ pairs: [String], option: String) throws -> [PermissionName: PermissionStatus] {
        var map: [PermissionName: PermissionStatus] = [:]
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let status = PermissionStatus(rawValue: parts[1]) else {
                throw ValidationError(
                    "\(option) takes NAME=STATUS with STATUS one of \(PermissionStatus.allCases.map(\.rawValue).joined(separator: ", ")); got '\(pair.quotable)'"
                )
            }
            map[PermissionName(rawValue: parts[0])] = status
        }
        return map
    }
}
