import AccountSync
import CatalogDocuments
import Persistence
import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which catalog a device runs, and why (`status`, `catalog`).
public struct CatalogChoice: Equatable, Sendable {
    public enum Source: String, Sendable { case compiled, published }

    public var source: Source
    public var version: Int
    public var fingerprint: String?
    /// For a publication: the percentage it reaches.
    public var rollout: Int?
    /// One sentence: why this catalog.
    public var reason: String
    /// Whether the device knows of publications at all (it pulled, or keeps some).
    public var knowsPublications: Bool
    /// Published versions meant for this subject that were refused, and why (not run).
    public var refused: [Refusal] = []

    /// A published version the device would have run but refused.
    public struct Refusal: Equatable, Sendable {
        public var version: Int
        public var fingerprint: String
        public var reason: String
    }

    /// What runs, in words: "compiled version 1", "published version 2".
    public var summary: String { "\(source.rawValue) version \(version)" }
}

extension CatalogChoice: TourValueRepresentable {
    public var tourValue: TourValue {
        .members([
            "source": .string(source.rawValue), "version": .int(version),
            "fingerprint": fingerprint.map(TourValue.string),
            "rollout": rollout.map(TourValue.int), "reason": .string(reason),
            "refused": refused.isEmpty
                ? nil
                : .list(
                    refused.map {
                        [
                            "version": .int($0.version), "fingerprint": .string($0.fingerprint),
                            "reason": .string($0.reason),
                        ]
                    }),
        ])
    }
}

/// What a device trusts to sign a published catalog: the keys compiled into its binary, the
/// retirements it heard of, and its clock (a key retired at a time refuses from that time).
public struct PublicationTrust: Sendable {
    public var keys: [PublicationKey]
    public var retirements: [String: Double]
    public var now: Double

    public init(keys: [PublicationKey], retirements: [String: Double] = [:], now: Double) {
        self.keys = keys
        self.retirements = retirements
        self.now = now
    }

    /// Why the signatures do not let `document` run, or nil when one is good.
    func problem(_ document: String, _ signatures: [CatalogSignature]) -> String? {
        switch PublicationSigning.verdict(
            document: document, signatures: signatures, trusted: keys, retirements: retirements, now: now)
        {
        case .signed: nil
        case .refused(let why): why
        }
    }
}

/// Published catalogs on a device: pulled with the account's sync, verified against the binary's
/// own vocabulary and history and its trusted keys before they are kept, and chosen by rollout
/// (Docs/Publishing.md, Docs/Security.md). A device never runs a document it cannot check: offline,
/// or when a document fails, it keeps the last good one still published, else the compiled
/// catalog, and names the one it refused once.
public enum Publications {
    /// Why `text` must not run in `product`'s binary, or nil when it may: its fingerprint, the
    /// document, its vocabulary against the handler's, and its history against the versions the
    /// binary compiled in (`releases`) and the other publications it keeps.
    public static func problems(
        version: Int, fingerprint: String, text: String, signatures: [CatalogSignature], product: Product,
        releases: [RecordedCatalog], others: [PublishedCatalog], trust: PublicationTrust
    ) -> [String] {
        guard text.utf8.count <= SyncAPI.maxDocumentBytes else {
            return [
                """
                the document is \(text.utf8.count) bytes; a catalog document is at most \
                \(SyncAPI.maxDocumentBytes)
                """
            ]
        }
        // Before anything of the document is read: only what a trusted key signed is looked at.
        if let unsigned = trust.problem(text, signatures) { return [unsigned] }
        guard SHA256Hasher.hex(text.utf8) == fingerprint else {
            return [
                """
                the document's SHA-256 is not the fingerprint the server gave (\
                \(CatalogDocument.short(fingerprint)))
                """
            ]
        }
        // The binary's own catalog wins over a publication that is not newer: a new app release
        // is not overridden by a publication made for an older one.
        guard version > product.catalog.version else {
            return [
                """
                version \(version) is not newer than the catalog compiled into this binary (version \
                \(product.catalog.version))
                """
            ]
        }
        var earlier = releases
        let known = Set(releases.map(\.file))
        for other in others where other.version < version && !known.contains("\(other.version).json") {
            earlier.append(RecordedCatalog(file: "\(other.version).json", text: other.document))
        }
        let check = PublicationCheck(
            text: text, app: product.catalog.app,
            earlier: earlier.filter { (Int($0.file.dropLast(5)) ?? 0) < version },
            vocabulary: product.handler.vocabulary, allowingGaps: true)
        guard check.isAccepted else { return check.problems }
        guard check.document?.catalog.version == version else {
            return [
                """
                the document is version \(check.document?.catalog.version ?? 0), not the \(version) the \
                server named
                """
            ]
        }
        return []
    }

    /// At most this many live publications are considered (the newest): enough for a rollout and
    /// its rollback, and a bound on what a pull costs.
    public static let maximumKept = 8

    /// An entity tag as the server writes one (a quoted hex digest), else nil: what goes back into
    /// a request header is never arbitrary text.
    static func validTag(_ tag: String) -> String? {
        let inner = tag.dropFirst().dropLast()
        guard tag.count <= 80, tag.hasPrefix("\""), tag.hasSuffix("\""), !inner.isEmpty,
            inner.allSatisfy({ $0.isHexDigit })
        else { return nil }
        return tag
    }

    /// Pulls the app's publications (a 304 when unchanged), keeps those that verify and notes the
    /// others (``CatalogChoice/Refusal``, named by ``choose`` with what runs instead). Never fails the
    /// command: a pull that does not happen (offline, a refusal) leaves what the device has and is
    /// returned as a note.
    ///
    /// A launch pulls only when the list it holds is stale: the server's `Cache-Control: max-age`
    /// at the last pull has passed, or this binary did not make that pull. `force` (the `sync`
    /// command) asks whatever the age.
    @discardableResult
    public static func update(
        _ store: DeviceStore, product: Product, releases: [RecordedCatalog], trustedKeys: [PublicationKey],
        transport: any SyncTransport, now: Date, force: Bool = true
    ) async -> String? {
        let app = product.catalog.app
        do {
            let last = try store.database.catalogPull(app: app)
            let sameBinary = last?.binary == product.fingerprint
            if !force, sameBinary, let fresh = last?.freshUntil, now < fresh { return nil }
            // The tag says "I hold this list": not when a kept copy was altered on this device
            // (its hash is no longer its fingerprint), which must then be fetched again, not
            // answered 304 for as long as the list is unchanged.
            let intact = try store.database.publications(app: app).allSatisfy {
                SHA256Hasher.hex($0.document.utf8) == $0.fingerprint
            }
            let tag = sameBinary && intact ? last?.entityTag : nil
            switch try await transport.catalogs(app: app, ifNoneMatch: tag) {
            case .unchanged(let maxAge):
                try store.database.noteUnchangedPull(
                    app: app, at: now, freshUntil: maxAge.map { now.addingTimeInterval(Double($0)) })
                return nil
            case .changed(let list, let entityTag, let maxAge):
                var kept: [PublishedCatalog] = []
                var refused: [String] = []
                // Retirements the server names are kept with those heard before (only ever more).
                var retirements = try store.database.publicationKeyRetirements(app: app)
                for key in list.keys {
                    if let retired = key.retiredAt {
                        retirements[key.id] = min(retired, retirements[key.id] ?? retired)
                    }
                }
                let trust = PublicationTrust(
                    keys: trustedKeys, retirements: retirements, now: now.timeIntervalSince1970)
                // The salt is the device's own (not the server's word): which subjects a rollout
                // reaches is fixed by the app and version alone. Oldest first, so each document's
                // history holds only the ones that verified before it.
                let offered = list.publications.prefix(Self.maximumKept).map { offered in
                    var publication = offered
                    publication.rollout = min(100, max(0, offered.rollout))
                    publication.salt = Rollout.catalogSalt(app: app, version: offered.version)
                    return publication
                }.sorted { $0.version < $1.version }
                var seen: Set<Int> = []
                for publication in offered where seen.insert(publication.version).inserted {
                    let problems = Self.problems(
                        version: publication.version, fingerprint: publication.fingerprint,
                        text: publication.document,
                        signatures: publication.signatures, product: product, releases: releases,
                        others: kept, trust: trust)
                    if problems.isEmpty {
                        kept.append(publication)
                    } else {
                        refused.append(
                            """
                            version \(publication.version) \(publication.fingerprint.prefix(64)): \
                            \(problems.joined(separator: "; "))
                            """
                        )
                    }
                }
                // The tag is kept with the refusals: the same list is not fetched and refused again
                // (the refusal is named once); a new binary asks afresh (`binary`).
                try store.database.storePull(
                    app: app, kept: kept, entityTag: entityTag.flatMap(Self.validTag),
                    binary: product.fingerprint,
                    refused: refused.isEmpty ? nil : refused.joined(separator: "\n"), at: now,
                    freshUntil: maxAge.map { now.addingTimeInterval(Double($0)) },
                    retirements: retirements.filter { $0.value <= now.timeIntervalSince1970 + 366 * 86_400 })
                return nil
            }
        } catch let error as SyncError {
            return "published catalogs not pulled: \(error)"
        } catch {
            return "published catalogs not stored: \(error)"
        }
    }

    /// The subject a rollout draws for `user` of `product` on this device: the account when the
    /// product has a user-scoped flow and the user syncs from this file (is enrolled, whatever this
    /// command's options) or starts to with this command (`syncsNow`: it has an account server and
    /// token, and enrols before it pulls or pushes), else the install.
    ///
    /// So the first command that syncs draws as every later one does, with or without the server:
    /// the same file gives the same answer on every run. A user who runs offline first and signs
    /// in later draws by the install until that command, and by the account from it on (the
    /// published version can change then, once, as the account's other devices already run it).
    public static func subject(_ store: DeviceStore, product: Product, user: String, syncsNow: Bool = false)
        throws -> String
    {
        if product.catalog.flows.contains(where: { $0.scope == .user }),
            try syncsNow || store.database.syncsAccount(app: product.catalog.app, user: user)
        {
            return TourSession.accountSubject(user)
        }
        return "install:" + (try store.installID())
    }

    /// The product as it runs for `subject` on this device: with the newest kept publication whose
    /// rollout includes the subject and that still verifies, else with its compiled catalog.
    ///
    /// Every kept document's signature is checked again before it runs (a key retired since, a
    /// file altered since), and a document that fails any check is refused: it is in the choice's
    /// ``CatalogChoice/refused``, with the last pull's refusals, for the caller to name once
    /// (``noteRefusals``).
    public static func choose(
        _ store: DeviceStore, product: Product, releases: [RecordedCatalog],
        trustedKeys: @autoclosure () -> [PublicationKey], now: Date, subject: () throws -> String
    ) throws -> (product: Product, choice: CatalogChoice) {
        let app = product.catalog.app
        let kept = try store.database.publications(app: app)
        let pulled = try store.database.catalogPull(app: app)
        let knows = pulled != nil || !kept.isEmpty
        // What the last pull refused, one line each: "version N FINGERPRINT: why".
        let pullRefusals = (pulled?.refused ?? "").split(separator: "\n").compactMap {
            line -> CatalogChoice.Refusal? in
            guard line.hasPrefix("version "), let colon = line.firstIndex(of: ":") else { return nil }
            let head = line[line.index(line.startIndex, offsetBy: 8)..<colon].split(separator: " ")
            guard let version = head.first.flatMap({ Int($0) }) else { return nil }
            return .init(
                version: version, fingerprint: head.count > 1 ? String(head[1]) : "",
                reason: String(line[line.index(after: colon)...].drop(while: { $0 == " " })))
        }
        // The compiled catalog's fingerprint is worked out only where it is shown: a command on a
        // device that knows no publication does not write the catalog's document to hash it.
        var compiled = CatalogChoice(
            source: .compiled, version: product.catalog.version,
            fingerprint: knows ? product.fingerprint : nil,
            rollout: nil,
            reason: kept.isEmpty
                ? (pulled == nil ? "no publication pulled" : "no live publication of \(app)")
                : "no kept publication both includes this subject and is newer than this binary's catalog",
            knowsPublications: knows, refused: pullRefusals)
        // The subject only when there is something to draw (an install id is made on first use).
        guard !kept.isEmpty else { return (product, compiled) }
        let subject = try subject()
        // The keys only now: a device that keeps no publication never parses one.
        let trust = PublicationTrust(
            keys: trustedKeys(), retirements: try store.database.publicationKeyRetirements(app: app),
            now: now.timeIntervalSince1970)
        // Kept documents were checked against this binary when they were pulled; a binary that did
        // not pull them (an app update since) checks them in full. Every one's signature and hash
        // are checked before it runs.
        let checkedByThisBinary = pulled?.binary != nil && pulled?.binary == product.fingerprint
        var refused = pullRefusals
        for publication in kept
        where Rollout.includes(subject: subject, salt: publication.salt, percent: publication.rollout) {
            let problems: [String]
            if checkedByThisBinary {
                problems = [
                    publication.document.utf8.count > SyncAPI.maxDocumentBytes
                        ? "the document is larger than a catalog may be" : nil,
                    trust.problem(publication.document, publication.signatures),
                    SHA256Hasher.hex(publication.document.utf8) == publication.fingerprint
                        ? nil
                        : """
                        the kept document's SHA-256 is not its fingerprint (it was altered on this \
                        device)
                        """,
                ].compactMap { $0 }.prefix(1).map { $0 }
            } else {
                problems = Self.problems(
                    version: publication.version, fingerprint: publication.fingerprint,
                    text: publication.document,
                    signatures: publication.signatures, product: product, releases: releases, others: kept,
                    trust: trust)
            }
            guard problems.isEmpty, let document = try? CatalogDocument(text: publication.document) else {
                let reason =
                    problems.isEmpty ? "the kept document does not read" : problems.joined(separator: "; ")
                refused.append(
                    .init(version: publication.version, fingerprint: publication.fingerprint, reason: reason))
                continue
            }
            var chosen = product
            chosen.use(published: document.catalog, fingerprint: publication.fingerprint)
            return (
                chosen,
                CatalogChoice(
                    source: .published, version: publication.version, fingerprint: publication.fingerprint,
                    rollout: publication.rollout,
                    reason:
                        """
                        published version \(publication.version) at \(publication.rollout)%, \
                        which includes this subject
                        """,
                    knowsPublications: true, refused: refused.filter { $0.version > publication.version })
            )
        }
        compiled.refused = refused
        return (product, compiled)
    }

    /// Journals the refusals of `choice` (each with what runs instead) and returns the lines to
    /// print once: only refusals not journalled before with the same reason.
    public static func noteRefusals(_ store: DeviceStore, app: String, _ choice: CatalogChoice, now: Date)
        -> [String]
    {
        let refusals = choice.refused.map { refusal in
            OnboardingDatabase.CatalogRefusal(
                version: refusal.version, fingerprint: refusal.fingerprint, reason: refusal.reason,
                runsInstead: choice.summary,
                time: now)
        }
        guard let new = try? store.database.noteCatalogRefusals(app: app, refusals) else { return [] }
        return new.map {
            "published catalog version \($0.version) refused: \($0.reason); runs \($0.runsInstead) instead"
        }
    }
}
