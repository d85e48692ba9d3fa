import AccountSync
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `sync`, the one command that talks to the account server on purpose.
extension Runner {
    /// `sync`: push then pull now, and say what happened.
    func sync(retrySetAside: Bool = false) async throws {
        guard syncs else {
            throw CLIFailure.usage(
                """
                sync needs an account server: --server URL or ONBOARDING_SERVER (with the account's token in \
                ONBOARDING_TOKEN, or as the install when the app enrolls installs)
                """
            )
        }
        if retrySetAside {
            let moved = try await session.retrySetAside()
            if !json { Output.line("sending \(moved) set-aside journal row\(moved == 1 ? "" : "s") again") }
        }
        let (pushed, pulled) = await session.sync()
        // The publications list too, whatever its age: what a later command runs.
        if let transport,
            let note = await Publications.update(
                store, product: compiled, releases: cli.releases, trustedKeys: cli.trustedKeys,
                transport: transport, now: Date()),
            !note.hasPrefix("published catalogs not pulled")
        {
            Output.error("\(cli.executable): \(note)")
        }
        let failure = pushed.failure ?? { if case .failure(let error) = pulled { error } else { nil } }()
        // Each row set aside now is said once, with the server's reason, on standard error.
        for row in pushed.setAside {
            Output.error(
                """
                \(cli.executable): journal row \(row.journalID) (\(row.event)) set aside: \
                the server refused it (\(row.status)): \(row.reason); the rows after it went on (sync \
                --retry-set-aside sends it again)
                """
            )
        }
        if !json {
            var line = "pushed \(pushed.applied) journal row\(pushed.applied == 1 ? "" : "s")"
            if pushed.duplicates > 0 { line += " (\(pushed.duplicates) the server already had)" }
            if pushed.failure == nil, case .success = pulled { line += "; pulled the account's records" }
            Output.line(line)
            let learned = pushed.learned + ((try? pulled.get()) ?? [])
            for transition in learned { Output.line("  · \(transition.record.outcome)") }
        }
        if let failure {
            throw CLIFailure.sync(failure, waiting: (try? await session.syncStatus()?.waiting) ?? 0)
        }
        try await report(.status)
    }
}
