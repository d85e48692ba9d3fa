import TourCodec
import TourCore

/// The checks a catalog document passes before it is published (on the account server) and
/// before it is used (on a device, again, against its own binary's vocabulary): the same checks a
/// build runs on its compiled catalog.
///
/// - it is a catalog document this build reads (format, shape), of `app`;
/// - its flows are coherent and use only the vocabulary the app's binary declares (effect kinds and
///   payloads, context keys, requests);
/// - its history is complete: every earlier compiled or published version's steps are placed by
///   its migrations, and its version rises.
public struct PublicationCheck: Sendable {
    /// The app the document was given for.
    public let app: String
    /// The document as read, when it reads.
    public let document: CatalogDocument?
    /// Its canonical text (what is stored and fingerprinted), when it reads.
    public let canonicalText: String?
    /// Every problem, each a sentence naming its place; empty when the document may be used.
    public let problems: [String]
    /// The same problems of a document that reads, with their flow, step and path (the studio
    /// shows each beside what it concerns); those of a document that does not read are only in
    /// ``problems``.
    public let catalogProblems: [CatalogProblem]

    /// - Parameter keeper: where `earlier` is kept (a server advises registering what it lacks).
    /// - Parameter allowingGaps: whether versions may be missing between the earlier ones and this
    ///   one. A device knows only the versions compiled into it and those it was sent (a withdrawn
    ///   one in between is not); the server, which keeps every version, allows none.
    public init(
        text: String, app: String, earlier: [RecordedCatalog], vocabulary: CatalogDeclarations,
        allowingGaps: Bool = false,
        keeper: CatalogHistory.Keeper = .build
    ) {
        self.app = app
        let document: CatalogDocument
        do {
            document = try CatalogDocument(text: text)
        } catch {
            self.document = nil
            canonicalText = nil
            problems = ["not a catalog document this build reads: \(error)"]
            catalogProblems = []
            return
        }
        self.document = document
        canonicalText = try? document.text()
        var problems: [String] = []
        if canonicalText == nil { problems.append("the document holds a number that is not finite") }
        guard document.catalog.app == app else {
            self.problems = problems + ["the document is \(document.catalog.app)'s catalog, not \(app)'s"]
            catalogProblems = []
            return
        }
        let structured =
            document.catalog.problems(declaring: vocabulary)
            + CatalogHistory(earlier, app: app).problems(today: document, keeper: keeper)
            .filter { !allowingGaps || $0.kind != .missingRelease }
        catalogProblems = structured
        self.problems = problems + structured.map(\.description)
    }

    public var isAccepted: Bool { problems.isEmpty && document != nil && canonicalText != nil }
}
