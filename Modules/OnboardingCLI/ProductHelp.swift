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

/// Help texts that speak for the product: its own permissions, signals, features and flows, by its
/// own name and its own word for a flow. Built from the catalog, once per process.
enum ProductHelp {
    static func root(_ cli: CLIProduct) -> String {
        let catalog = cli.catalog
        let noun = catalog.flowNoun
        let flows = catalog.flows.map { "\($0.id) (\($0.name))" }
        var lines = [
            """
            With no subcommand: an interactive session. The app launches, the card showing is printed, \
            and each line 
            """
                + """
                you type is an action (`next`, ...) or a command (`show`, `wait 1.5`, `status`, `help`, \
                `quit`). 
                """
                    + """
                    When standard input is not a terminal it reads one command per line and exits 1 if any \
                    line was 
                    """
                + "refused (`play` stops at the first refused line instead).",
            "",
            "\(cli.displayName)'s \(flows.count == 1 ? noun : noun + "s"): \(flows.joined(separator: ", ")).",
            listing(
                "Features (`visit`)", catalog.features, none: "\(cli.displayName) has no features to visit."),
            listing("Signals (`signal`)", catalog.signals, none: "\(cli.displayName) reports no signals."),
            listing(
                "Permissions (`--permission`, `--answer`)", catalog.permissions.map(\.rawValue),
                none: "\(cli.displayName) asks for no permissions."),
        ]
        if !catalog.requestGates.isEmpty {
            lines.append(
                "Service answers (`--answer`): "
                    + catalog.requestGates.map { "\($0)=granted|denied|unavailable" }.joined(separator: ", ")
                    + ".")
        }
        lines += [
            "",
            """
            Environment: ONBOARDING_DB (the database file), ONBOARDING_CLOCK=wall|virtual (virtual: \
            a clock kept 
            """
                + "in the database that only `wait` moves).",
            """
            Exit status: 0 done; 1 refused; 2 usage (the command line or environment); 3 database; \
            130 interrupted.
            """,
            """
            With --json every command prints one JSON document, errors as {\"error\": {\"code\", \
            \"message\", 
            """
                + "\"allowed\", ...}}; play and sessions print JSON Lines.",
            "Completions: \(cli.executable) --generate-completion-script bash|zsh|fish.",
        ]
        return lines.joined(separator: "\n")
    }

    /// "Features: dashboard." or the sentence for none.
    static func listing(_ label: String, _ names: [String], none: String) -> String {
        names.isEmpty ? none : "\(label): \(names.joined(separator: ", "))."
    }

    /// ": a, b, c" for an argument's help, or "" when there is nothing to list.
    static func suffix(_ names: [String]) -> String {
        names.isEmpty ? "" : ": \(names.prefix(8).joined(separator: ", "))\(names.count > 8 ? ", ..." : "")"
    }

    /// "next, back, skip" from the product's own action names.
    static func examples(_ names: [String]) -> String {
        let preferred = ["next", "back", "skip"].filter(names.contains)
        let picked = preferred.isEmpty ? Array(names.prefix(3)) : preferred
        return picked.joined(separator: ", ")
    }

    static func flowNames(replayable: Bool) -> [String] {
        guard let catalog = CLIEnvironment.product?.catalog else { return [] }
        return (replayable ? catalog.replayableFlows : catalog.flows.map(\.id)).map(\.rawValue)
    }
}

/// `wait` on the real clock: time passes for real. On a terminal a countdown shows that it is
/// waiting; Ctrl-C stops it cleanly (nothing was written: the wait commits only when it ends).
enum RealTimeWait {
    static func wait(_ seconds: Double, runner: Runner) async throws {
        guard case .wall = runner.timeSource, seconds > 0 else {
            try await runner.wait(seconds)
            return
        }
        let interrupt = Interrupt.install()
        defer { interrupt.remove() }
        let showsCountdown = seconds > 3 && isatty(STDOUT_FILENO) == 1 && !runner.json
        let end = Date().addingTimeInterval(seconds)
        while true {
            let left = end.timeIntervalSinceNow
            if left <= 0 { break }
            if interrupt.happened {
                if showsCountdown { Output.write("\r\u{1B}[K") }
                throw CLIFailure(
                    code: CLIFailure.Code.interrupted.rawValue,
                    message: "interrupted: the wait stopped; nothing was written",
                    exitCode: CLIFailure.interruptedStatus)
            }
            if showsCountdown {
                Output.write("\r\u{1B}[K  waiting \(Int(left.rounded(.up))) s (Ctrl-C stops)")
            }
            try await Task.sleep(nanoseconds: UInt64(min(left, 0.1) * 1_000_000_000))
        }
        if showsCountdown { Output.write("\r\u{1B}[K") }
        try await runner.wait(0)
    }
}

/// SIGINT while a command waits: noted, so the wait can stop and say so instead of the process
/// dying mid-line.
///
/// A plain signal handler that sets a flag, not a Dispatch signal source: libdispatch on Linux
/// receives signals through a `signalfd` and blocks the signal only on its own thread, so a SIGINT
/// the kernel delivered to another thread (with the disposition set to ignore, as a source needs)
/// was discarded, and under load the wait sometimes never heard Ctrl-C.
final class Interrupt: Sendable {
    var happened: Bool { interruptReceived != 0 }

    private init() {
        interruptReceived = 0
        signal(SIGINT) { _ in interruptReceived = 1 }
    }

    static func install() -> Interrupt { Interrupt() }

    func remove() {
        signal(SIGINT, SIG_DFL)
    }
}

/// Set by the SIGINT handler (a `sig_atomic_t`, the one kind of value a handler may write).
nonisolated(unsafe) private var interruptReceived: sig_atomic_t = 0
