import AccountSync
import ArgumentParser
import Dispatch
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

/// What a product's executable hands the shared CLI.
public struct CLIProduct: Sendable {
    /// The executable's name: `finite`, `lockedin`, ...
    public var executable: String
    public var displayName: String
    /// Builds the product for one run, from what the run knows about its device.
    public var make: @Sendable (RunEnvironment) -> Product
    /// The product's catalog (the same in every run): for help, validation and redaction.
    public let catalog: TourCatalog
    /// What the product's code provides to the catalog (context keys, device facts, effects).
    public let declarations: CatalogDeclarations
    /// The catalog document of every version the product shipped (`check` holds today's against them).
    public let releases: [RecordedCatalog]
    /// The publication keys this binary trusts (its `publication-keys/` folder; in a debug build,
    /// also those of `$ONBOARDING_TRUSTED_KEYS_FILE`, for tests that make their own keys). Read
    /// the first time a command needs them (a publication to keep or run), not at every start:
    /// parsing a key links in the signature library's start-up (Docs/Performance.md, section 4).
    public var trustedKeys: [PublicationKey] { keys.value }
    private let keys: TrustedKeys
    /// The app's enrollment key, when installs without sign-in sync (``ProductRegistration/enrollmentKey``).
    public let enrollmentKey: String?
    /// Masks secret field values in everything the CLI prints.
    let redactor: SecretRedactor
    /// Help texts built from the catalog, once per process: the argument parser reads a command's
    /// configuration and options many times per parsed line.
    private let texts = HelpTexts()

    public init(
        executable: String, displayName: String, releases: [RecordedCatalog] = [],
        publicationKeys: [RecordedCatalog] = [],
        enrollmentKey: String? = nil, make: @escaping @Sendable (RunEnvironment) -> Product
    ) {
        self.executable = executable
        self.displayName = displayName
        self.enrollmentKey = enrollmentKey
        self.releases = releases
        self.make = make
        let product = make(RunEnvironment(databasePath: ":memory:", offline: false, user: "default"))
        keys = TrustedKeys(files: publicationKeys, app: product.catalog.app)
        catalog = product.catalog
        declarations = product.handler.vocabulary
        redactor = catalog.redactor
    }

    /// The CLI of a registered product (`APP/CLI/main.swift` is this one line).
    public init(_ registration: ProductRegistration) {
        self.init(
            executable: registration.executable, displayName: registration.displayName,
            releases: registration.releases, publicationKeys: registration.publicationKeys,
            enrollmentKey: registration.enrollmentKey, make: registration.make)
    }

    /// Keys a test made, trusted by a debug build only: a shipped (release) binary trusts the keys
    /// compiled into it and nothing else, whatever its environment says.
    static func testKeys(app: String) -> [PublicationKey] {
        #if DEBUG
            guard let path = ProcessInfo.processInfo.environment["ONBOARDING_TRUSTED_KEYS_FILE"],
                let data = FileManager.default.contents(atPath: path),
                let value = try? TourValue(jsonUTF8: data)
            else { return [] }
            let texts = (value.listValue ?? [value]).compactMap { try? $0.jsonText() }
            return TrustedPublicationKeys.parse(texts.map { RecordedCatalog(file: path, text: $0) }, app: app)
                .keys
        #else
            return []
        #endif
    }

    /// The text `key` names, built by `make` the first time it is asked for.
    func text(_ key: String, _ make: () -> String) -> String { texts.text(key, make) }
}

/// The trusted keys, parsed once, when first asked for.
private final class TrustedKeys: Sendable {
    private let files: [RecordedCatalog]
    private let app: String
    private let parsed = Locked<[PublicationKey]?>(nil)

    init(files: [RecordedCatalog], app: String) {
        self.files = files
        self.app = app
    }

    var value: [PublicationKey] {
        if let keys = parsed.withLock({ $0 }) { return keys }
        let keys = TrustedPublicationKeys.parse(files, app: app).keys + CLIProduct.testKeys(app: app)
        parsed.withLock { $0 = keys }
        return keys
    }
}

/// Texts computed once and kept.
private final class HelpTexts: Sendable {
    private let texts = Locked<[String: String]>([:])

    func text(_ key: String, _ make: () -> String) -> String {
        if let text = texts.withLock({ $0[key] }) { return text }
        let text = make()
        texts.withLock { $0[key] = text }
        return text
    }
}

enum CLIEnvironment {
    @TaskLocal static var product: CLIProduct?

    static var current: CLIProduct {
        guard let product else { fatalError("OnboardingCLI.main(_:) sets the product before parsing") }
        return product
    }
}

/// The entry point every product's `main.swift` calls.
public enum OnboardingCLI {
    /// Runs one command line of `product` and exits with its status.
    ///
    /// Synchronous on purpose: an `async` main drains its queue through `dispatch_main`, which ends
    /// the main thread with `pthread_exit`, and glibc loads libgcc_s and unwinds the thread's stack
    /// to do that, on every command (about 0.4 MiB of a start's peak memory). The command
    /// runs as a task on Swift's pool instead, while the main thread waits for it to exit the
    /// process; nothing in a command runs on the main actor.
    ///
    /// The waiting main thread takes the signals sent to the process (Ctrl-C during a wait,
    /// ``Interrupt``): every other thread is libdispatch's, which blocks them, and a mask inherited
    /// from the parent (a Swift program spawns its children from threads that block them) would
    /// leave them pending for good.
    public static func main(_ product: CLIProduct, arguments: [String]? = nil) -> Never {
        var none = sigset_t()
        pthread_sigmask(SIG_SETMASK, &none, nil)
        Task.detached {
            let status = await CLIEnvironment.$product.withValue(product) {
                await run(arguments)
            }
            exit(status)
        }
        while true { DispatchSemaphore(value: 0).wait() }
    }

    /// Parses and runs one command line; returns the exit status. Every message, the argument
    /// parser's included, is printed through ``Output`` (so secrets are masked there), and a parse
    /// error follows the same contract as a refusal: one line (the usage only with `--help`),
    /// exit status 2, and the error document under `--json`.
    static func run(_ arguments: [String]?) async -> Int32 {
        let given = arguments ?? Array(CommandLine.arguments.dropFirst())
        do {
            if let quick = QuickParse.command(given) {
                try await quick.command.run(quick.options)
                return 0
            }
            var command = try RootCommand.parseAsRoot(given)
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            return 0
        } catch let exit as ExitCode {
            // Commands print their own failures before they throw the status.
            return exit.rawValue
        } catch {
            let code = RootCommand.exitCode(for: error)
            if code == .success {
                // Help, the version, a completion script: our own text, which quotes no input.
                let message = RootCommand.fullMessage(for: error)
                if wantsJSON(given) {
                    Output.help(helpDocument(message, given: given))
                } else if !message.isEmpty {
                    Output.help(message)
                }
                return 0
            }
            var failure = Runner.failure(for: error, hint: nil)
            // `APP stauts`: the root command reads any word as a stray argument; say which command it was
            // near.
            if let first = given.first, !first.hasPrefix("-"), !CommandList.names.contains(first) {
                let commands = CommandList.scriptableNames.sorted() + CommandList.standaloneNames
                let suggestion = NameSuggestion.nearest(to: first, in: commands)
                failure = .usage(
                    """
                    unknown command '\(first.quotable)'.\(suggestion.map { " Did you mean '\($0)'?" } ?? "") \
                    Commands: \(commands.joined(separator: ", ")).
                    """,
                    allowed: commands, suggestion: suggestion)
            }
            Output.fail(failure, json: wantsJSON(given))
            return failure.exitCode
        }
    }

    /// `--json` among the options (not after `--`, where words are arguments).
    static func wantsJSON(_ arguments: [String]) -> Bool {
        arguments.prefix(while: { $0 != "--" }).contains("--json")
    }

    /// Help or the version under `--json`: one document like every other answer,
    /// `{"version": {"executable", "version"}}` or `{"help": {"text"}}`.
    static func helpDocument(_ text: String, given: [String]) -> String {
        struct Version: Encodable {
            struct Body: Encodable {
                var executable: String
                var version: String
            }
            var version: Body
        }
        struct Help: Encodable {
            struct Body: Encodable { var text: String }
            var help: Body
        }
        let executable = CLIEnvironment.current.executable
        let document =
            given.contains("--version") && text.hasPrefix(executable + " ")
            ? try? Render.json(
                Version(version: .init(executable: executable, version: OnboardingVersion.current)))
            : try? Render.json(Help(help: .init(text: text)))
        return document ?? "{}"
    }
}
