import AccountSync
import ArgumentParser
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Every way a command can fail, as one value: the machine-readable `code`, the one line a person
/// reads, what is accepted instead, and the exit status. Text output prints `message` on standard
/// error; `--json` prints `{"error": {...}}` on standard output (and the line on standard error).
///
/// Exit statuses: 0 success; 1 refused (the product said no: an action, visit, signal, replay,
/// reset or a script line); 2 usage (the command line itself: unknown command or option, missing
/// or malformed argument, bad environment value); 3 database (cannot open, read or write the
/// file); 130 interrupted (Ctrl-C during `wait`).
struct CLIFailure: Error {
    /// The codes a JSON error can carry: the engine's refusal codes, and these.
    enum Code: String, CaseIterable {
        case usage, database, interrupted
        /// The account server could not be reached or refused a sync; nothing local was lost.
        case sync
        /// A product effect did not fit what the product's handler declares (its payload, or the
        /// domain state it writes): the event was refused and nothing was written.
        case effect
        /// A translation file was refused (`catalog strings --import`): one of its translations
        /// would show wrongly, or it is not a translation of this catalog; nothing was written.
        case translations
    }

    /// `usage`, `database`, `interrupted`, or a refusal's code (`unknown_action`, ...).
    var code: String
    var message: String
    var allowed: [String] = []
    var suggestion: String?
    /// What moves things on, when nothing is showing ("`launch` starts the Walkthrough").
    var hint: String?
    /// The script or session line refused, counted from 1.
    var line: Int?
    var exitCode: Int32

    static let refusedStatus: Int32 = 1
    static let usageStatus: Int32 = 2
    static let databaseStatus: Int32 = 3
    static let interruptedStatus: Int32 = 130
    static let syncStatus: Int32 = 4

    /// Every code a JSON error can carry, for the README and the tests.
    static var allCodes: [String] {
        TourRefusal.Code.allCases.map(\.rawValue) + Code.allCases.map(\.rawValue)
    }

    static func usage(_ message: String, allowed: [String] = [], suggestion: String? = nil) -> CLIFailure {
        CLIFailure(
            code: Code.usage.rawValue, message: message, allowed: allowed, suggestion: suggestion,
            exitCode: usageStatus)
    }

    static func translations(_ message: String) -> CLIFailure {
        CLIFailure(code: Code.translations.rawValue, message: message, exitCode: refusedStatus)
    }

    static func refusal(_ refusal: TourRefusal, hint: String?) -> CLIFailure {
        var message = refusal.description
        if let hint { message += " " + hint }
        return CLIFailure(
            code: refusal.code.rawValue, message: message, allowed: refusal.allowed,
            suggestion: refusal.suggestion, hint: hint, exitCode: refusedStatus)
    }

    static func sync(_ error: SyncError, waiting: Int) -> CLIFailure {
        let queued =
            waiting == 0
            ? "" : "; \(waiting) journal row\(waiting == 1 ? "" : "s") wait in the outbox for the next sync"
        return CLIFailure(code: Code.sync.rawValue, message: "error: \(error)\(queued)", exitCode: syncStatus)
    }

    static func effect(_ error: EffectError) -> CLIFailure {
        CLIFailure(
            code: Code.effect.rawValue, message: "refused: \(error); nothing was written",
            exitCode: refusedStatus)
    }

    static func storage(_ error: StoreError) -> CLIFailure {
        CLIFailure(code: Code.database.rawValue, message: "error: \(error)", exitCode: databaseStatus)
    }

    /// An argument-parser error: its first line (the usage only with `--help`).
    static func parser(_ error: any Error) -> CLIFailure {
        let text = RootCommand.message(for: error)
        let first = text.split(separator: "\n").first.map(String.init) ?? text
        return .usage(first.hasPrefix("Error: ") ? String(first.dropFirst("Error: ".count)) : first)
    }

    /// The failure as a script's line `number` reports it.
    func at(line number: Int) -> CLIFailure {
        var failure = self
        failure.line = number
        failure.message = "line \(number): \(message)"
        if failure.exitCode == Self.usageStatus { failure.exitCode = Self.refusedStatus }
        return failure
    }

    /// `{"error": {"code", "message", "allowed", ...}}`.
    var json: String {
        struct Body: Encodable {
            var error: Details
        }
        struct Details: Encodable {
            var code: String
            var message: String
            var allowed: [String]
            var suggestion: String?
            var hint: String?
            var line: Int?
            var exitCode: Int32
        }
        let body = Body(
            error: Details(
                code: code, message: message, allowed: allowed, suggestion: suggestion, hint: hint,
                line: line,
                exitCode: exitCode))
        return (try? Render.json(body)) ?? #"{"error":{"code":"\#(code)"}}"#
    }
}

extension Output {
    /// One failure: a line on standard error, and under `--json` the error document on standard output.
    static func fail(_ failure: CLIFailure, json: Bool) {
        let executable = CLIEnvironment.product?.executable ?? "onboarding"
        error("\(executable): \(failure.message)")
        if json { errorDocument(failure.json) }
    }
}
