import ArgumentParser
import CatalogDocuments
import TourCodec
import TourCore
import TourRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `catalog`: the product's catalog as a document, its release history, and what changed between
/// two versions.
struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "The catalog as one canonical document, its release history, and diffs between versions.",
        discussion: """
            A catalog is one canonical JSON document (sorted members, no incidental order) whose SHA-256 \
            is its fingerprint. Each version the product shipped is recorded in \
            Apps/<Product>/Onboarding/releases/ \
            by scripts/record-catalog and compiled into this build. SOURCE is a recorded version (1, 2, \
            ...), \
            `current` (this build's catalog, the default), `in-use` (the catalog this device runs: a \
            published one meant for it, else this build's; see Docs/Publishing.md) or the path of a document \
            file.
            """,
        subcommands: [
            CatalogShow.self, CatalogDiffCommand.self, CatalogHistoryCommand.self, CatalogStringsCommand.self,
            CatalogEditCommand.self,
        ],
        defaultSubcommand: CatalogShow.self)

    @ParentCommand var root: RootCommand
}

/// `catalog [SOURCE]`: a readable outline, or with `--json` the document itself.
struct CatalogShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract:
            """
            The catalog (default: this build's) as an outline; with --json, its canonical document, \
            byte for byte.
            """
    )
    @ParentCommand var parent: CatalogCommand
    @Argument(
        help: "A recorded version, `current`, `in-use`, or a document file.",
        completion: .file(extensions: ["json"]))
    var source: String?
    @Flag(
        help:
            """
            With --json: every recorded version and this build's, oldest first, as one JSON array (what \
            `onboarding-server register` takes).
            """
    )
    var history = false

    func run() async throws {
        let catalogs = CatalogSources(CLIEnvironment.current)
        if history {
            guard source == nil else {
                throw CLIFailure.usage("--history prints every version: give no SOURCE with it")
            }
            guard parent.root.options.json else {
                throw CLIFailure.usage(
                    "--history prints documents: add --json (`catalog history` lists the versions)")
            }
            var texts = catalogs.history.versions.compactMap { catalogs.history.texts[$0] }
            if catalogs.history.releases[catalogs.product.catalog.version] == nil {
                texts.append(try catalogs.product.document.text())
            }
            let documents = texts.map { text in text.hasSuffix("\n") ? String(text.dropLast()) : text }
            Output.exactDocument("[" + documents.joined(separator: ",") + "]")
            return
        }
        let (document, origin) = try source == "in-use" ? inUse(catalogs) : catalogs.document(source)
        if parent.root.options.json {
            Output.exactDocument(try document.text())
            return
        }
        Output.line(try CatalogOutline.text(document, origin: origin, releases: catalogs.history.versions))
    }
}

extension CatalogShow {
    /// The catalog this device runs, as the database says (no pull): the newest kept publication
    /// whose rollout includes its subject, else this build's; the origin says which and why.
    func inUse(_ catalogs: CatalogSources) throws -> (CatalogDocument, String) {
        let options = parent.root.options.run
        let store: DeviceStore
        do {
            store = try DeviceStore.open(
                path: try options.resolvedDatabasePath(), createsFolder: options.usesDefaultDatabase)
        } catch let error as StoreError {
            throw CLIFailure.storage(error)
        }
        let product = catalogs.product
        let user = options.user
        let now = Date()
        // What a command with these options would run: one that syncs draws as the account.
        let syncsNow = options.syncsAsAccount()
        let chosen = try Publications.choose(
            store, product: product, releases: catalogs.cli.releases, trustedKeys: catalogs.cli.trustedKeys,
            now: now
        ) {
            try Publications.subject(store, product: product, user: user, syncsNow: syncsNow)
        }
        for line in Publications.noteRefusals(store, app: product.catalog.app, chosen.choice, now: now) {
            Output.error("\(catalogs.cli.executable): \(line)")
        }
        var origin =
            """
            \(chosen.choice.source.rawValue) version \(chosen.choice.version), in use: \
            \(chosen.choice.reason)
            """
        for refused in chosen.choice.refused {
            origin += "; published version \(refused.version) refused: \(refused.reason)"
        }
        return (chosen.product.document, origin)
    }
}

/// `catalog diff OLD [NEW]`.
struct CatalogDiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract:
            """
            What changed from OLD to NEW (default: this build's catalog): steps added, removed, renamed, \
            reordered, wording, actions, effects, and whether a migration places the users of each removed \
            or renamed step.
            """,
        discussion:
            "Exit status 1 when a step or flow of OLD that is gone in NEW is placed by no declared migration."
    )
    @ParentCommand var parent: CatalogCommand
    @Argument(
        help: "A recorded version, `current`, or a document file.", completion: .file(extensions: ["json"]))
    var old: String
    @Argument(
        help: "A recorded version, `current` (the default), or a document file.",
        completion: .file(extensions: ["json"]))
    var new: String?

    func run() async throws {
        let catalogs = CatalogSources(CLIEnvironment.current)
        let (before, beforeOrigin) = try catalogs.document(old)
        let (after, afterOrigin) = try catalogs.document(new)
        let diff = CatalogDiff(from: before, to: after)
        if parent.root.options.json {
            let body: TourValue = [
                "app": .string(after.catalog.app),
                "from": [
                    "version": .int(before.catalog.version), "fingerprint": .string(try before.fingerprint()),
                    "source": .string(beforeOrigin),
                ],
                "to": [
                    "version": .int(after.catalog.version), "fingerprint": .string(try after.fingerprint()),
                    "source": .string(afterOrigin),
                ],
                "changes": .list(diff.changes.map(\.tourValue)),
                "unplaced": .int(diff.unplaced.count),
            ]
            Output.document(try body.jsonText())
        } else {
            Output.line(try CatalogOutline.diff(diff, from: before, beforeOrigin, to: after, afterOrigin))
        }
        if !diff.unplaced.isEmpty { throw ExitCode(CLIFailure.refusedStatus) }
    }
}

/// `catalog history`.
struct CatalogHistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract:
            """
            The catalog versions this product recorded when it shipped, with their fingerprints, \
            and where this build stands.
            """
    )
    @ParentCommand var parent: CatalogCommand

    func run() async throws {
        let cli = CLIEnvironment.current
        let catalogs = CatalogSources(cli)
        let current = catalogs.product.document
        let fingerprint = try current.fingerprint()
        let releases = try catalogs.history.versions.compactMap {
            version -> (Int, CatalogDocument, String)? in
            guard let document = catalogs.history.releases[version] else { return nil }
            return (version, document, try document.fingerprint())
        }
        let recorded = releases.first { $0.0 == current.catalog.version }
        let standing =
            recorded == nil
            ? "not recorded yet (record it with scripts/record-catalog when it ships)"
            : recorded?.2 == fingerprint ? "recorded" : "differs from its recorded document"
        if parent.root.options.json {
            let body: TourValue = [
                "app": .string(current.catalog.app),
                "releases": .list(
                    releases.map { version, document, fingerprint in
                        [
                            "version": .int(version), "fingerprint": .string(fingerprint),
                            "flows": .int(document.catalog.flows.count),
                            "steps": .int(document.catalog.flows.map(\.steps.count).reduce(0, +)),
                        ]
                    }),
                "current": [
                    "version": .int(current.catalog.version), "fingerprint": .string(fingerprint),
                    "standing": .string(standing),
                ],
            ]
            Output.document(try body.jsonText())
            return
        }
        var lines = ["\(cli.displayName) · catalog releases recorded in Apps/…/Onboarding/releases:"]
        if releases.isEmpty { lines.append("  none yet") }
        for (version, document, fingerprint) in releases {
            let steps = document.catalog.flows.map(\.steps.count).reduce(0, +)
            lines.append(
                """
                  version \(version)  \(CatalogDocument.short(fingerprint))  \
                \(Check.count(document.catalog.flows.count, "flow")), \(Check.count(steps, "step"))
                """
            )
        }
        lines.append(
            """
            this build: version \(current.catalog.version)  \(CatalogDocument.short(fingerprint))  \
            \(standing)
            """
        )
        Output.line(lines.joined(separator: "\n"))
    }
}

/// Where catalog documents come from: this build's catalog, its compiled history, or a file.
struct CatalogSources {
    let cli: CLIProduct
    let product: Product
    let history: CatalogHistory

    init(_ cli: CLIProduct) {
        self.cli = cli
        product = cli.make(RunEnvironment(databasePath: ":memory:", offline: false, user: "default"))
        history = CatalogHistory(cli.releases, app: product.catalog.app)
    }

    /// The document `source` names, and how to name where it came from.
    func document(_ source: String?) throws -> (CatalogDocument, String) {
        guard let source, source != "current" else { return (product.document, "this build") }
        if let version = Int(source) {
            guard let document = history.releases[version] else {
                let recorded = history.versions.map(String.init)
                throw CLIFailure.usage(
                    """
                    \(cli.displayName) has no recorded catalog version \(version); recorded: \
                    \(recorded.isEmpty ? "none" : recorded.joined(separator: ", ")) (or `current`, \
                    or a document file)
                    """,
                    allowed: recorded + ["current"])
            }
            return (document, "release \(version)")
        }
        let document = try Self.read(source)
        guard document.catalog.app == product.catalog.app else {
            throw CLIFailure.usage(
                """
                \(source) is \(document.catalog.app)'s catalog, not \(product.catalog.app)'s; \
                give one of \(cli.displayName)'s documents, a recorded version or `current`
                """
            )
        }
        return (document, source)
    }

    /// A document file.
    static func read(_ path: String) throws -> CatalogDocument {
        switch DeviceStore.kind(of: path) {
        case _ where path.isEmpty:
            throw CLIFailure.usage(
                "an empty name is neither a recorded version, `current`, nor a document file")
        case .missing:
            throw CLIFailure.usage(
                "there is no file '\(path.quotable)', and it is neither a recorded version nor `current`")
        case .folder:
            throw CLIFailure.usage("'\(path.quotable)' is a folder; give a catalog document file (.json)")
        case .file: break
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIFailure.usage("'\(path.quotable)' cannot be read (check its permissions)")
        }
        do {
            return try CatalogDocument(text: String(decoding: data, as: UTF8.self))
        } catch {
            throw CLIFailure.usage("\(path) is not a catalog document: \(error)")
        }
    }
}

extension CatalogDiff.Change {
    var tourValue: TourValue {
        var object: [String: TourValue] = ["kind": .string(kind.rawValue), "detail": .string(detail)]
        if let flow { object["flow"] = .string(flow.rawValue) }
        if let step { object["step"] = .string(step.rawValue) }
        if let placement {
            object["placement"] = .string(placement.rawValue)
            object["placed"] = .bool(placement != .notPlaced)
        }
        return .object(object)
    }
}
