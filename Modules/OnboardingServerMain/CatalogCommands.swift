import AccountSync
import ArgumentParser
import AsyncHTTPClient
import CatalogDocuments
import Foundation
import NIOCore
import NIOHTTP1
import OnboardingServer
import ServerPublishing
import TourCodec
import TourCore

/// The document in `path`, read whole: at most a catalog document's size (the API's limit, so the
/// command line accepts nothing the API would refuse for its size).
func documentText(_ path: String, documents: Int = 1) throws -> String {
    let limit = SyncAPI.maxDocumentBytes * documents
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
        throw Refusal("cannot read a catalog document from '\(path)'")
    }
    if let size = attributes[.size] as? Int, size > limit {
        throw Refusal("\(path) is \(size) bytes; a catalog document is at most \(limit) bytes")
    }
    guard let data = FileManager.default.contents(atPath: path),
        let text = String(data: data, encoding: .utf8)
    else {
        throw Refusal("cannot read a catalog document from '\(path)' (it must be UTF-8 text)")
    }
    return text
}

/// Prints what a register or publish did; a refusal lists every problem and exits 1.
func report(_ outcome: CatalogStore.Outcome, _ verb: String) throws {
    switch outcome {
    case .stored(let entry):
        print(
            """
            \(entry.app) catalog version \(entry.version) \(verb) (fingerprint \
            \(CatalogDocument.short(entry.fingerprint))
            """
                + (entry.source == .published ? ", rollout \(entry.rollout)%)" : ")"))
    case .refused(let problems):
        refused(problems)
    }
}

func refused(_ problems: [String]) -> Never {
    note(
        """
        onboarding-server: the document is refused, nothing changed (\(problems.count) problem\
        \(problems.count == 1 ? "" : "s")):
        """
    )
    for problem in problems { note("  - \(problem)") }
    Foundation.exit(1)
}

/// How a publish or withdraw reaches the catalogs: straight to the database (an operator holding
/// it), or through a server's API with a person's credential (a publisher, who holds the key and
/// not the database).
struct CatalogTarget: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            """
            Act through this server's API (https://HOST) as a person: their credential in \
            $ONBOARDING_CREDENTIAL or $ONBOARDING_CREDENTIAL_FILE.
            """,
            discussion: "Without it, the database of DATABASE_URL is written directly, as an operator."))
    var server: String?
    @OptionGroup var database: DatabaseOptions

    /// The server and the person's credential, when acting through the API.
    func api() throws -> (URL, String)? {
        guard let server else { return nil }
        let url = try Settings.fetchableURL(server, "--server")
        guard let credential = try Settings.secret("ONBOARDING_CREDENTIAL") else {
            throw Refusal(
                "--server needs your credential in ONBOARDING_CREDENTIAL or ONBOARDING_CREDENTIAL_FILE")
        }
        return (url, credential)
    }

    /// Sends `body` to `path` on the server; the answer's JSON, or exit 1 with the server's message.
    func send(_ method: HTTPMethod, _ path: String, body: TourValue?, to api: (URL, String)) async throws
        -> TourValue
    {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            var request = HTTPClientRequest(url: api.0.absoluteString + path)
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(api.1)")
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: try body.jsonUTF8()))
            }
            let response = try await http.execute(request, timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 4 << 20)
            try await http.shutdown()
            let value = (try? TourValue(jsonUTF8: bytes.readableBytesView)) ?? .null
            guard (200..<300).contains(response.status.code) else {
                let message =
                    value.objectValue?["error"]?.objectValue?["message"]?.stringValue
                    ?? "status \(response.status.code)"
                note(
                    """
                    onboarding-server: \(api.0.host ?? "the server") refused (\(response.status.code)): \
                    \(message)
                    """
                )
                Foundation.exit(1)
            }
            return value
        } catch {
            try? await http.shutdown()
            throw error
        }
    }
}

/// `register`: the catalogs compiled into a binary of the app, what publications are checked against.
struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract:
            """
            Register the catalogs compiled into a binary of an app (`APP catalog --history --json`, \
            or one `APP catalog --json`).
            """,
        discussion: """
            Each FILE is one catalog document or a history (a JSON array of documents, every version the \
            binary compiled in). All of them are registered oldest first; a version registered already with \
            the same document is left as it is. Publications are checked against the newest registered \
            binary's vocabulary and every earlier version.
            """)

    @Option(help: "The app.") var app: String
    @Argument(help: "Catalog documents or histories.", completion: .file(extensions: ["json"])) var files:
        [String]
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard SyncAPI.isValidName(app) else { throw ValidationError("the app must be \(SyncAPI.nameRule)") }
        guard !files.isEmpty else {
            throw ValidationError("give the catalog file: `\(app) catalog --history --json > history.json`")
        }
    }

    func run() async throws {
        var documents: [(version: Int, text: String)] = []
        for file in files { documents += try catalogDocuments(in: file) }
        // Oldest first, as the binary's history was made; a document that does not read goes first,
        // so its refusal is the first thing said.
        documents.sort { $0.version < $1.version }
        // The same document given twice (two files of one history) is registered once.
        var seen: Set<String> = []
        documents = documents.filter { seen.insert($0.text).inserted }
        let (app, batch) = (app, documents)
        let outcomes = try await database.withClient { client, logger in
            let store = CatalogStore(client: client, logger: logger)
            var outcomes: [CatalogStore.Outcome] = []
            for document in batch {
                let outcome = try await store.register(
                    app: app, text: document.text, by: .commandLine(), at: Date().timeIntervalSince1970)
                outcomes.append(outcome)
                if case .refused = outcome { break }
            }
            return outcomes
        }
        for (index, outcome) in outcomes.enumerated() {
            if case .refused = outcome, index > 0 {
                note(
                    """
                    onboarding-server: version \(documents[index].version) of \(files.joined(separator: " "))\
                     is refused; the versions before it stay registered
                    """
                )
            }
            try report(outcome, "registered as compiled")
        }
    }
}

/// The catalog documents of `path`: one document, or a history (a JSON array of documents), each
/// with its version (0 when it does not say: the register check then says why).
func catalogDocuments(in path: String) throws -> [(version: Int, text: String)] {
    let text = try documentText(path, documents: 100)
    guard text.first(where: { !$0.isWhitespace }) == "[" else { return [(version(of: text), text)] }
    guard let array = (try? TourValue(jsonText: text))?.listValue else {
        throw Refusal("\(path) opens with '[' but is not a JSON array of catalog documents")
    }
    guard !array.isEmpty else { throw Refusal("\(path) holds no catalog document") }
    return try array.map { value in
        let document = String(decoding: try value.jsonUTF8(), as: UTF8.self)
        return (version(of: document), document)
    }
}

private func version(of text: String) -> Int {
    (try? TourValue(jsonText: text))?.objectValue?["version"]?.intValue ?? 0
}

/// `publish`: a catalog document to a percentage of the app's subjects, without an app release.
struct Publish: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract:
            """
            Sign and publish a catalog document to a percentage of an app's subjects (or change its rollout).
            """,
        discussion: """
            The document is signed here with each --key (the app's publication keys: devices run only what \
            a key compiled into them signed), then checked as a build checks its catalog: coherent, using \
            only the vocabulary of the newest registered binary, placing every earlier version's steps. A \
            refused document changes nothing; every problem is listed. Publishing the same document again \
            sets its rollout (no key needed).
            """)

    @Option(help: "The app.") var app: String
    @Option(help: "The percentage of subjects (accounts or installs) it reaches, 0 to 100.") var rollout: Int?
    @Option(
        help: "A signing key file (`keys new`); repeat to sign with several (a key rotation).",
        completion: .file(extensions: ["json"]))
    var key: [String] = []
    @Option(
        help:
            """
            A guarded rollout's stages, rising percentages (5,25,50,100): the rollout guard raises it stage \
            by stage.
            """
    )
    var stages: String?
    @Option(
        name: .customLong("guard"),
        help:
            """
            With --stages: what must not drop, completion:-2pp or step:STEP:-1pp (the drop tolerated, \
            in points).
            """
    )
    var guardrail: String?
    @Option(
        help: "With --stages: the flow whose starters the guard compares (default: the document's first).")
    var guardFlow: String?
    @Option(help: "With --stages: the least time a stage lasts: 90s, 30m, 12h, 1d (default: 1d).")
    var stageTime = "1d"
    @Option(
        help:
            """
            With --stages: the least number of subjects who start the flow on it during a stage (default: \
            500).
            """
    )
    var stageSubjects = 500
    @Argument(help: "The catalog document.", completion: .file(extensions: ["json"])) var file: String
    @OptionGroup var target: CatalogTarget

    func validate() throws {
        if let rollout, !(0...100).contains(rollout) {
            throw ValidationError("--rollout is a percentage, 0 to 100")
        }
        if stages != nil, rollout != nil {
            throw ValidationError(
                "--rollout and --stages do not go together: a guarded rollout starts at its first stage")
        }
        if stages != nil, guardrail == nil {
            throw ValidationError("--stages needs --guard: \(GuardedRollout.Guardrail.grammar)")
        }
        if stages == nil, guardrail != nil || guardFlow != nil {
            throw ValidationError("--guard and --guard-flow go with --stages (5,25,50,100)")
        }
    }

    /// The guarded rollout asked for, or nil; a refusal says what is allowed.
    func plan() throws -> GuardedRollout.Plan? {
        guard let stages, let guardrail else { return nil }
        switch GuardedRollout.Plan.read(
            stages: stages, guardrail: guardrail, flow: guardFlow ?? "", stageTime: stageTime,
            stageSubjects: String(stageSubjects))
        {
        case .success(let plan): return plan
        case .failure(let refusal): throw Refusal(refusal.message)
        }
    }

    func run() async throws {
        guard SyncAPI.isValidName(app) else { throw ValidationError("the app must be \(SyncAPI.nameRule)") }
        let text = canonical(try documentText(file))
        let keys = try SigningKeys.read(key)
        for key in keys where key.app != app {
            throw Refusal("the key \(key.id) signs for \(key.app), not \(app)")
        }
        let signatures = try keys.map { try $0.sign(document: text) }
        let plan = try plan()
        let (app, rollout) = (app, plan?.stages.first ?? rollout ?? 100)
        if let api = try target.api() {
            let body: TourValue = .members([
                "document": .string(text), "rollout": .int(rollout), "signatures": signatures.tourValue,
                "guarded": plan.map(Self.guardedBody),
            ])
            let answer = try await target.send(.POST, "/v1/apps/\(app)/catalogs", body: body, to: api)
            let publication = answer.objectValue?["publication"]?.objectValue
            print(
                "\(app) catalog version \(publication?["version"]?.intValue ?? 0) published (fingerprint "
                    + """
                    \(CatalogDocument.short(publication?["fingerprint"]?.stringValue ?? "")), \
                    rollout \(rollout)%)
                    """
            )
            if let plan { print(Self.guardedLine(plan)) }
            return
        }
        try report(
            try await target.database.withClient { client, logger in
                try await CatalogStore(client: client, logger: logger).publish(
                    app: app, text: text, rollout: rollout, signatures: signatures, guarded: plan,
                    by: .commandLine(),
                    at: Date().timeIntervalSince1970)
            }, "published")
        if let plan { print(Self.guardedLine(plan)) }
    }

    static func guardedBody(_ plan: GuardedRollout.Plan) -> TourValue {
        .members([
            "stages": .list(plan.stages.map { .int($0) }), "guard": .string(plan.guardrail.text),
            "flow": plan.guardrail.flow.isEmpty ? nil : .string(plan.guardrail.flow),
            "stageMinimumSeconds": .double(plan.minimumSeconds),
            "stageMinimumSubjects": .int(plan.minimumSubjects),
        ])
    }

    static func guardedLine(_ plan: GuardedRollout.Plan) -> String {
        """
        guarded: stages \(plan.stages.map { "\($0)%" }.joined(separator: ", ")), each at least \
        \(GuardedRollout.duration(plan.minimumSeconds)) 
        """
            + """
            and \(plan.minimumSubjects) subjects; rolled back by itself if \(plan.guardrail.text) is \
            broken 
            """
            + "(`onboarding-server rollout show --app APP` follows it)"
    }
}

/// `unpublish`: withdraws a publication (a rollback).
struct Unpublish: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpublish",
        abstract:
            "Withdraw a published catalog version: devices return to the newest other one meant for them.")

    @Option(help: "The app.") var app: String
    @Option(help: "The published version to withdraw.") var version: Int
    @OptionGroup var target: CatalogTarget

    func run() async throws {
        guard SyncAPI.isValidName(app) else { throw ValidationError("the app must be \(SyncAPI.nameRule)") }
        let (app, version) = (app, version)
        if let api = try target.api() {
            _ = try await target.send(.DELETE, "/v1/apps/\(app)/catalogs/\(version)", body: nil, to: api)
            print("\(app) catalog version \(version) withdrawn")
            return
        }
        let withdrawn = try await target.database.withClient { client, logger in
            try await CatalogStore(client: client, logger: logger).withdraw(
                app: app, version: version, by: .commandLine(), at: Date().timeIntervalSince1970)
        }
        guard withdrawn != nil else {
            note("onboarding-server: \(app) has no live publication of version \(version)")
            throw ExitCode(1)
        }
        print("\(app) catalog version \(version) withdrawn")
    }
}
