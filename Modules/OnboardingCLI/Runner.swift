import AccountSync
import ArgumentParser
import Haptics
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

/// One CLI run: the product, its session on the database, and how output is printed.
final class Runner: @unchecked Sendable {
    let cli: CLIProduct
    let product: Product
    let session: TourSession
    let store: DeviceStore
    let databasePath: String
    /// The database file as an absolute path, for people to find it.
    var displayPath: String { DeviceStore.absolutePath(databasePath) }
    let json: Bool
    /// The options the run was started with (a session's lines cannot change them).
    let options: RunOptions
    let timeSource: TimeSource
    let effects = EffectLog()
    /// In an interactive session: the card last printed, so a `wait` that changed nothing says so
    /// instead of printing the same card again (a one-shot command or `play` always prints it).
    var sessionCard: String?
    var inSession = false
    /// `--context`: the device facts this run reports.
    let deviceFacts: [String: TourValue]
    /// `--server` (or `$ONBOARDING_SERVER`) names an account server.
    let syncs: Bool
    /// How this run reaches it (as the account, or as the install).
    let transport: (any SyncTransport)?
    /// The catalog this run uses (compiled, or published and meant for this subject), and why.
    let catalogChoice: CatalogChoice
    /// The product as compiled into this binary (before a publication replaced its catalog).
    let compiled: Product

    /// The fingerprints of the catalogs compiled into this binary (its releases and its catalog):
    /// a journal row run under any other ran under a publication. Worked out when asked (`journal`).
    var compiledFingerprints: Set<String> {
        Set(cli.releases.map { SHA256Hasher.hex($0.text.utf8) } + [compiled.fingerprint].compactMap { $0 })
    }

    init(options: RunOptions) async throws {
        cli = CLIEnvironment.current
        self.options = options
        let path = try options.resolvedDatabasePath()
        databasePath = path
        let time = try options.resolvedTimeSource()
        timeSource = time
        do {
            // The per-product default lives in a folder of ours, created with the file by the first
            // write; an explicit path's folder must exist.
            store = try DeviceStore.open(path: path, createsFolder: options.usesDefaultDatabase)
        } catch let error as StoreError {
            throw CLIFailure.storage(error)
        }
        let answers = try options.answerMaps()
        let environment = RunEnvironment(
            databasePath: path, offline: try options.isOffline(), user: options.user,
            requestAnswers: answers.requests)
        var product = cli.make(environment)
        // Consent first: a command that turns analytics off sends no fact, this one included.
        if let analytics = options.analytics {
            try store.setAnalytics(analytics == "on", app: cli.catalog.app)
        }
        let transport = try options.syncTransport(store: store, databasePath: path)
        self.transport = transport
        syncs = transport != nil
        // Published catalogs come with sync: pulled at launch when the list held is older than the
        // server's max-age (a 304 when unchanged; `sync` asks whatever the age) and verified
        // against this binary (its vocabulary, its history, its trusted keys) before they are
        // kept, and again before each use; a document that does not verify is never run and is
        // named once (journalled in catalog_refusal).
        if let transport,
            let note = await Publications.update(
                store, product: product, releases: cli.releases, trustedKeys: cli.trustedKeys,
                transport: transport, now: Date(),
                force: false),
            !note.hasPrefix("published catalogs not pulled")
        {
            Output.error("\(cli.executable): \(note)")
        }
        self.compiled = product
        let (device, user, compiledProduct) = (store, options.user, product)
        let now = Date()
        let chosen = try Publications.choose(
            device, product: product, releases: cli.releases, trustedKeys: cli.trustedKeys, now: now
        ) {
            try Publications.subject(
                device, product: compiledProduct, user: user,
                syncsNow: transport.map { !$0.syncsAsInstall } ?? false)
        }
        for line in Publications.noteRefusals(device, app: product.catalog.app, chosen.choice, now: now) {
            Output.error("\(cli.executable): \(line)")
        }
        product = chosen.product
        // The device keeps the locale asked for, as a phone keeps its language.
        if let requested = try options.requestedLocale(
            remembered: try store.rememberedLocale(app: cli.catalog.app))
        {
            if options.locale != nil { try store.setLocale(requested.locale, app: cli.catalog.app) }
            product.localize(to: requested.locale)
            let strings = product.catalog.strings
            if requested.explicit, product.catalog.locale == strings.source,
                requested.locale.language != strings.source.language
            {
                Output.error(
                    """
                    \(cli.executable): no \(requested.locale) texts; showing \(strings.source) (texts: \
                    \(strings.locales.map(\.rawValue).joined(separator: ", ")))
                    """
                )
            }
        }
        catalogChoice = chosen.choice
        self.product = product
        // Permission statuses the device remembers from earlier runs, then this run's settings.
        let remembered = try store.deviceValues(app: product.catalog.app).compactMap {
            key, value -> (PermissionName, PermissionStatus)? in
            guard key.hasPrefix("permission."), let status = value.stringValue.flatMap(PermissionStatus.init)
            else {
                return nil
            }
            return (PermissionName(rawValue: String(key.dropFirst("permission.".count))), status)
        }
        let statuses = Dictionary(remembered, uniquingKeysWith: { _, last in last })
            .merging(try options.permissionMap(options.permissions, option: "--permission")) { _, given in
                given
            }
        let permissions = StubPermissionProvider(statuses: statuses, answers: answers.permissions)
        json = options.json
        deviceFacts = try options.deviceFacts()
        let log = effects
        session = TourSession(
            product: product, user: options.user, store: store,
            haptics: TerminalHaptics { log.append(line: $0) },
            permissions: permissions, time: time, deviceFacts: deviceFacts, sync: transport,
            budget: try options.familyBudget(), deviceKind: try options.deviceKind(),
            budgetExchangeInterval: try options.budgetExchangeInterval(),
            observe: { effect in log.append(effect) })
    }

    /// The app's journal rows, oldest first, with facts derived for rows written before 0.6.0.
    func journalWithFacts(user: String? = nil) throws -> [JournalEntry] {
        try store.journal(app: product.catalog.app, user: user, engine: product.engine)
    }

    /// Runs `body` with a runner for `options`. A refusal, a database error or a bad option becomes
    /// one ``CLIFailure``: printed once (a line on standard error; the error document under
    /// `--json`) and the exit status thrown as ``ExitCode``.
    static func run(_ options: RunOptions, _ body: (Runner) async throws -> Void) async throws {
        var runner: Runner?
        do {
            let made = try await Runner(options: options)
            runner = made
            // With an account server, every command starts from what the account's devices did.
            await made.session.pullOnce()
            try await body(made)
            runner?.noteCreatedFile()
        } catch let exit as ExitCode {
            runner?.noteCreatedFile()
            throw exit
        } catch {
            runner?.noteCreatedFile()
            let failure = await runner?.failure(for: error) ?? Runner.failure(for: error, hint: nil)
            Output.fail(failure, json: options.json)
            throw ExitCode(failure.exitCode)
        }
    }

    /// The failure `error` means, with the next-move hint when a refusal came while nothing showed.
    func failure(for error: any Error) async -> CLIFailure {
        if let refusal = error as? TourRefusal, refusal.flow == nil,
            [.nothingShowing, .unknownAction].contains(refusal.code)
        {
            return Self.failure(for: error, hint: try? await nextMoveHint())
        }
        return Self.failure(for: error, hint: nil)
    }

    static func failure(for error: any Error, hint: String?) -> CLIFailure {
        switch error {
        case let failure as CLIFailure: failure
        case let refusal as TourRefusal: .refusal(refusal, hint: hint)
        case let storage as StoreError: .storage(storage)
        case let effect as EffectError: .effect(effect)
        default: .parser(error)
        }
    }

    /// One line on standard error when this run created the database file.
    private var notedCreation = false
    func noteCreatedFile() {
        guard store.createdFile, !notedCreation else { return }
        notedCreation = true
        Output.error("\(cli.executable): created the database at \(displayPath)")
    }

    func send(_ event: TourEvent) async throws {
        try await session.send(event)
    }

    func launch(version: String?) async throws {
        try await session.send(.appLaunched(version: version ?? product.currentVersion))
        for signal in product.launchSignals {
            try await session.send(.signal(signal))
        }
    }

    func wait(_ seconds: Double) async throws {
        try await session.advanceClock(by: seconds)
    }

    // MARK: - Output

    enum View { case card, status }

    /// Prints what the command did (its effects) and then the card or the status. With
    /// `unlessUnchanged` in a session, a card identical to the one last printed, with nothing done,
    /// is one line saying so.
    func report(_ view: View, unlessUnchanged: Bool = false) async throws {
        for warning in await session.drainWarnings() {
            Output.error("\(cli.executable): warning: \(warning)")
        }
        let snapshot = try await session.snapshot()
        let performed = effects.drain()
        let hint = snapshot.card == nil ? try await nextMoveHint() : nil
        let sync = view == .status ? try await session.syncStatus() : nil
        if json {
            Output.document(
                try Render.json(
                    snapshot, effects: performed.effects, hint: hint,
                    database: view == .status ? displayPath : nil, sync: sync,
                    catalog: view == .status && catalogChoice.knowsPublications ? catalogChoice : nil))
            return
        }
        for line in performed.lines { Output.line("  · \(line)") }
        switch view {
        case .card:
            let card = Render.card(snapshot, product: product.catalog, hint: hint)
            if unlessUnchanged, inSession, performed.lines.isEmpty, card == sessionCard {
                Output.line("  nothing new: the card above is still showing")
            } else {
                Output.line(card)
            }
            if inSession { sessionCard = card }
        case .status:
            Output.line(Render.status(snapshot, product: product.catalog, database: displayPath))
            if catalogChoice.knowsPublications { Output.line(Render.catalog(catalogChoice)) }
            if let sync {
                Output.line(Render.sync(sync))
            } else if syncs {
                Output.line("sync: not started yet")
            }
        }
    }
}

/// What one command did, in order: lines for text (effects worth printing, and the haptics the
/// terminal player played) and every effect performed, for JSON.
final class EffectLog: Sendable {
    private let log = Locked<(lines: [String], effects: [TourEffect])>(([], []))

    func append(line: String) { log.withLock { $0.lines.append(line) } }

    func append(_ effect: TourEffect) {
        log.withLock { log in
            log.effects.append(effect)
            if effect.isWorthPrinting { log.lines.append(effect.summary) }
        }
    }

    func drain() -> (lines: [String], effects: [TourEffect]) {
        log.withLock { log in
            defer { log = ([], []) }
            return log
        }
    }
}

extension TourEffect {
    /// Status reads and presentation changes are plumbing, and haptics are printed by the terminal
    /// haptic player; the rest is what a person notices.
    var isWorthPrinting: Bool {
        switch self {
        case .checkPermission, .presented, .dismissed, .haptic: false
        default: true
        }
    }
}

/// Everything the CLI prints goes through here: secret field values are masked in text and in JSON
/// documents alike, whatever printed them (an echoed line, a refusal, a parse error, a card).
enum Output {
    static var redactor: SecretRedactor { CLIEnvironment.product?.redactor ?? .none }

    static func line(_ text: String) {
        write(text + "\n")
    }

    /// One JSON document on one line.
    static func document(_ json: String) {
        standardOutput(redactor.redactJSON(json) + "\n")
    }

    /// A document whose bytes are its identity (a catalog, whose SHA-256 is its fingerprint): written
    /// exactly, without a newline after it, unless standard output is a terminal (for the prompt).
    static func exactDocument(_ json: String) {
        standardOutput(redactor.redactJSON(json) + (isatty(STDOUT_FILENO) == 1 ? "\n" : ""))
    }

    /// Unbuffered, so output interleaves correctly with standard error and reaches a pipe at once.
    static func write(_ text: String) {
        standardOutput(redactor.redact(text))
    }

    /// A script line as a transcript shows it; blank lines are not echoed. Typed input: masked by
    /// the stricter rule (``SecretRedactor/redactInput(_:json:)``).
    static func echo(_ text: String, json: Bool) {
        guard !text.allSatisfy(\.isWhitespace) else { return }
        if json {
            standardOutput(
                redactor.redactInput((try? Render.json(["line": text])) ?? "{}", json: true) + "\n")
        } else {
            standardOutput(redactor.redactInput("> " + text) + "\n")
        }
    }

    /// A failure's JSON document: it quotes typed input.
    static func errorDocument(_ json: String) {
        standardOutput(redactor.redactInput(json, json: true) + "\n")
    }

    /// Help and version text: written by us from the catalog, never from input, so not masked
    /// (`password=SECRET` in `do --help` is the parameter's shape).
    static func help(_ text: String) {
        standardOutput(text + "\n")
    }

    /// Standard error carries failures, which quote typed input.
    static func error(_ text: String) {
        writeAll(redactor.redactInput(text) + "\n", to: STDERR_FILENO)
    }

    private static func standardOutput(_ text: String) {
        writeAll(text, to: STDOUT_FILENO)
    }

    #if canImport(Glibc)
        private static let systemWrite = Glibc.write
    #else
        private static let systemWrite = Darwin.write
    #endif

    /// Writes every byte, unbuffered, across partial writes and interrupted calls; a closed pipe
    /// (the reader went away) ends the writing quietly.
    private static func writeAll(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            guard let start = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(descriptor, start + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
