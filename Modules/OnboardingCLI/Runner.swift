import ArgumentParser
import Foundation
import TourRuntime

/// One CLI run: the product, its session on the database, and how output is printed.
final class Runner: @unchecked Sendable {
    let cli: CLIProduct
    let product: Product
    let session: TourSession
    let database: OnboardingDatabase
    let json: Bool
    private let effects = EffectLog()

    init(options: CommonOptions) async throws {
        cli = CLIEnvironment.current
        let path = options.databasePath
        do {
            // The per-product default lives in a folder of ours, created with the file by the first
            // write; an explicit path's folder must exist.
            database = try OnboardingDatabase.open(path: path, createsFolder: options.usesDefaultDatabase)
        } catch let error as StorageError {
            throw CLIError.storage(error)
        }
        let answers = try options.answerMaps()
        let environment = RunEnvironment(
            databasePath: path, offline: options.offline, user: options.user, requestAnswers: answers.requests)
        product = cli.make(environment)
        // Permission statuses the device remembers from earlier runs, then this run's settings.
        let remembered = try database.session(
            SessionKey(app: product.catalog.app, user: options.user), scopes: product.scopes
        )
        .device.compactMap { key, value -> (PermissionName, PermissionStatus)? in
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
        let log = effects
        session = TourSession(
            product: product, user: options.user, database: database,
            haptics: TerminalHaptics { log.append(line: $0) },
            permissions: permissions, time: options.timeSource,
            observe: { effect in if effect.isWorthPrinting { log.append(line: effect.summary) } })
    }

    /// Runs `body` with a runner for `options`, turning refusals and storage errors into one line on
    /// standard error and a non-zero exit.
    static func run(_ options: CommonOptions, _ body: (Runner) async throws -> Void) async throws {
        do {
            let runner = try await Runner(options: options)
            try await body(runner)
        } catch let refusal as TourRefusal {
            Output.error("\(CLIEnvironment.current.executable): \(refusal)")
            throw ExitCode(1)
        } catch let error as CLIError {
            Output.error("\(CLIEnvironment.current.executable): \(error)")
            throw ExitCode(error.exitCode)
        }
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

    /// Prints what the command did (its effects) and then the card or the status.
    func report(_ view: View) async throws {
        let snapshot = try await session.snapshot()
        let performed = effects.drain()
        if json {
            Output.document(try Render.json(snapshot, effects: performed))
            return
        }
        for line in performed { Output.line("  · \(line)") }
        switch view {
        case .card: Output.line(Render.card(snapshot, product: cli))
        case .status: Output.line(Render.status(snapshot, product: cli))
        }
    }
}

/// What one command did, as lines in order: effects, and the haptics the terminal player played.
final class EffectLog: @unchecked Sendable {
    private let lock = NSLock()
    private var effects: [String] = []

    func append(line: String) { lock.withLock { effects.append(line) } }

    func drain() -> [String] {
        lock.withLock {
            defer { effects.removeAll() }
            return effects
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

enum CLIError: Error, CustomStringConvertible {
    case storage(StorageError)
    case script(line: Int, message: String)

    var description: String {
        switch self {
        case .storage(let error): "error: \(error)"
        case .script(let line, let message): "line \(line): \(message)"
        }
    }

    var exitCode: Int32 {
        switch self {
        case .storage: 3
        case .script: 1
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

    /// Unbuffered, so output interleaves correctly with standard error and reaches a pipe at once.
    static func write(_ text: String) {
        standardOutput(redactor.redact(text))
    }

    /// A script line as a transcript shows it; blank lines are not echoed.
    static func echo(_ text: String, json: Bool) {
        guard !text.allSatisfy(\.isWhitespace) else { return }
        if json {
            document((try? Render.json(["line": text])) ?? "{}")
        } else {
            line("> " + text)
        }
    }

    /// Help and version text: written by us from the catalog, never from input, so not masked
    /// (`password=SECRET` in `do --help` is the parameter's shape).
    static func help(_ text: String) {
        standardOutput(text + "\n")
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((redactor.redact(text) + "\n").utf8))
    }

    private static func standardOutput(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
