import AccountSync
import CatalogDocuments
import Crypto
import Foundation
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import TourCodec
import TourCore

/// Registering, publishing and withdrawing documents, each in one audited transaction.
extension CatalogStore {
    /// Registers the catalog compiled into a binary of the app (`APP catalog --json`): what later
    /// publications are checked against. Registering the same document again changes nothing.
    public func register(app: String, text: String, by actor: Actor, at time: Double) async throws -> Outcome
    {
        if let tooLarge = Self.sizeProblem(text) { return .refused([tooLarge]) }
        return try await write(app: app) { connection, existing in
            // A compiled catalog is held to its own vocabulary: it is what a binary declares.
            let document = try? CatalogDocument(text: text)
            let check = PublicationCheck(
                text: text, app: app, earlier: Self.recorded(existing, before: document?.catalog.version),
                vocabulary: document?.vocabulary ?? CatalogDeclarations(), keeper: .server)
            return try await store(
                check, source: .compiled, rollout: 0, signatures: [], by: actor, at: time, existing,
                connection)
        }
    }

    /// The largest document stored: far above any catalog (the largest of the five products is
    /// about 11 KB), far below what would slow a launch. The same for the API and the command line.
    public static let maximumDocumentBytes = SyncAPI.maxDocumentBytes

    static func sizeProblem(_ text: String) -> String? {
        let size = text.utf8.count
        return size > maximumDocumentBytes
            ? "the document is \(size) bytes; a catalog document is at most \(maximumDocumentBytes) bytes"
            : nil
    }

    /// Publishes a document to `rollout` percent of the app's subjects: checked against the newest
    /// registered binary's vocabulary and against every earlier version (compiled, published or
    /// withdrawn). Publishing the same document again sets its rollout (and brings a withdrawn one
    /// back); another document under a version already stored is refused.
    ///
    /// The document must carry a signature by one of the app's registered, unretired publication
    /// keys (``PublicationKeyStore``), unless it is stored already (a rollout change); signatures
    /// given with a stored document are added to its own (a key rotation's second signature).
    ///
    /// With `guarded`, the publication starts at the plan's first stage and the rollout guard
    /// raises it (``GuardedRollouts``); a plan whose guardrail names no flow guards the
    /// document's first. A version under a running or paused guard is not raised or lowered by
    /// hand: a person pauses or ends the guard first, or withdraws the publication.
    public func publish(
        app: String, text: String, rollout: Int, signatures: [CatalogSignature],
        guarded: GuardedRollout.Plan? = nil,
        by actor: Actor, at time: Double
    ) async throws -> Outcome {
        guard (0...100).contains(rollout) else {
            return .refused(["the rollout is a percentage, 0 to 100 (got \(rollout))"])
        }
        if let tooLarge = Self.sizeProblem(text) { return .refused([tooLarge]) }
        return try await write(app: app) { connection, existing in
            guard let check = Self.check(text, app: app, existing: existing) else {
                return .refused([
                    """
                    no catalog compiled into a binary of \(app) is registered, so there is no vocabulary to \
                    check against: 
                    """
                        + """
                        register one with `onboarding-server register --app \(app) FILE` (the document `\
                        \(app) catalog --json` prints)
                        """
                ])
            }
            let version = check.document?.catalog.version
            let guards = try await GuardedRollouts.all(app: app, on: connection, logger: logger)
            if let held = guards.first(where: {
                $0.version == version && [.running, .paused].contains($0.value.status)
            }) {
                return .refused([
                    """
                    version \(held.version) of \(app) is under a guarded rollout (\
                    \(held.value.status.rawValue), at \(held.value.percent)%), 
                    """
                        + """
                        which sets its rollout: end the guard first (`onboarding-server rollout end \
                        --app \(app) --version \(held.version)`)
                        """
                ])
            }
            guard let guarded else {
                return try await store(
                    check, source: .published, rollout: rollout, signatures: signatures, by: actor, at: time,
                    existing, connection)
            }
            let planned = Self.guardedPlan(guarded, check: check, existing: existing)
            guard planned.problems.isEmpty else { return .refused(planned.problems) }
            let outcome = try await store(
                check, source: .published, rollout: planned.plan.stages[0], signatures: signatures, by: actor,
                at: time, existing,
                connection)
            guard case .stored(let entry) = outcome else { return outcome }
            try await GuardedRollouts.insert(
                GuardedRollouts.Record(
                    app: app, version: entry.version, baseline: planned.baseline, startedAt: time,
                    updatedAt: time,
                    value: GuardedRollout(plan: planned.plan, at: time)), on: connection, logger: logger)
            try await AuditLog.append(
                .init(
                    at: time, actor: actor, app: app, action: "rollout.guarded",
                    target: "version \(entry.version)",
                    details: [
                        "stages": .list(planned.plan.stages.map { .int($0) }),
                        "guard": .string(planned.plan.guardrail.text),
                        "flow": .string(planned.plan.guardrail.flow), "baseline": .int(planned.baseline),
                        "stageMinimumSeconds": .double(planned.plan.minimumSeconds),
                        "stageMinimumSubjects": .int(planned.plan.minimumSubjects),
                    ]), on: connection, logger: logger)
            return outcome
        }
    }

    /// Withdraws a publication (a rollback): devices stop choosing it on their next pull, and a run
    /// on a step it added goes by its flow's declared policy. Nil when no such publication is live.
    public func withdraw(app: String, version: Int, by actor: Actor, at time: Double) async throws -> Entry? {
        let outcome = try await write(app: app) { connection, existing in
            guard
                existing.contains(where: {
                    $0.version == version && $0.source == .published && $0.withdrawnAt == nil
                })
            else {
                return .refused([])
            }
            try await connection.query(
                """
                UPDATE catalogs SET withdrawn_at = \(time) WHERE app = \(app) AND version = \(Int64(version))
                """,
                logger: logger)
            // A rollback by hand ends the version's guard: the publication is in people's hands.
            let guarded = try await GuardedRollouts.record(
                app: app, version: version, on: connection, logger: logger)
            let endsGuard = guarded.map { [.running, .paused].contains($0.value.status) } ?? false
            if endsGuard, var record = guarded {
                record.value.status = .ended
                record.updatedAt = time
                try await GuardedRollouts.update(record, on: connection, logger: logger)
            }
            try await AuditLog.append(
                .init(
                    at: time, actor: actor, app: app, action: "catalog.withdrawn",
                    target: "version \(version)",
                    details: endsGuard ? ["guard": "ended"] : [:]),
                on: connection, logger: logger)
            return .stored(try await Self.entry(app: app, version: version, on: connection, logger: logger))
        }
        if case .stored(let entry) = outcome { return entry }
        return nil
    }

    /// Runs `body` in a transaction that holds the app's catalogs still (one writer at a time).
    private func write(
        app: String, _ body: @escaping @Sendable (PostgresConnection, [Entry]) async throws -> Outcome
    ) async throws -> Outcome {
        let outcome = try await writes.write { connection, logger in
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext(\("catalogs/" + app)))", logger: logger)
            let existing = try await Self.all(app: app, on: connection, logger: logger)
            return try await body(connection, existing)
        }
        if case .stored = outcome { admitHeldFacts(app: app) }
        return outcome
    }

    /// Admits the app's held facts a stored catalog now declares (``HeldFacts``), on its own
    /// transaction, without holding up the answer. A store inside a request's transaction has not
    /// committed yet: the admission waits on the plan's row, which the catalog's insert holds until
    /// then. Whatever it does not do (its wait timed out, the server stopped) the servers'
    /// ``HeldFactsAdmission`` does within seconds.
    private func admitHeldFacts(app: String) {
        let writes = writes
        let logger = logger
        // Detached: a task made with `Task {}` would inherit the request's transaction (a
        // task-local) and write in it, not in a transaction of its own that waits for it.
        Task.detached {
            do {
                let admitted = try await HeldFacts.admit(app: app, writes: writes)
                if admitted > 0 {
                    logger.info("held facts admitted", metadata: ["app": "\(app)", "facts": "\(admitted)"])
                }
            } catch {
                logger.debug(
                    "held facts left to the admission service",
                    metadata: ["cause": "\(DatabaseUnavailable.describe(error))"])
            }
        }
    }

    private func store(
        _ check: PublicationCheck, source: Entry.Source, rollout: Int, signatures: [CatalogSignature],
        by actor: Actor,
        at time: Double, _ existing: [Entry], _ connection: PostgresConnection
    ) async throws -> Outcome {
        // Another app's document is refused for that, before its version is compared with this app's.
        guard let document = check.document, let text = check.canonicalText, document.catalog.app == check.app
        else {
            return .refused(check.problems)
        }
        let version = document.catalog.version
        let fingerprint = Self.fingerprint(text)
        let app = document.catalog.app
        let audit: AuditLog.Entry
        if let same = existing.first(where: { $0.version == version }) {
            // A binary may compile in what was published (the next release bakes it in): the
            // document keeps its published role.
            if source == .compiled, same.fingerprint == fingerprint { return .stored(same) }
            guard same.fingerprint == fingerprint, same.source == source else {
                return .refused([
                    """
                    version \(version) of \(app) is already \
                    \(same.source == .compiled ? "compiled into a binary" : "published") 
                    """
                        + """
                        as another document (fingerprint \(CatalogDocument.short(same.fingerprint))): \
                        a change is a new version
                        """
                ])
            }
            if source == .compiled { return .stored(same) }
            // A raised rollout or a withdrawn version brought back is checked again: a binary
            // registered since may not have its vocabulary, and a key may have been retired.
            var problems = check.problems
            let kept = same.signatures + signatures.filter { !same.signatures.contains($0) }
            if let unsigned = try await signatureProblem(text, kept, app: app, time: time, connection) {
                problems.append(unsigned)
            }
            guard problems.isEmpty else { return .refused(problems) }
            try await connection.query(
                """
                UPDATE catalogs SET rollout = \(Int32(rollout)), withdrawn_at = NULL, recorded_at = \(time),
                    recorded_by = \(actor.name), signatures = \(try kept.tourValue.jsonText())
                WHERE app = \(app) AND version = \(Int64(version))
                """, logger: logger)
            audit = .init(
                at: time, actor: actor, app: app,
                action: same.withdrawnAt == nil ? "catalog.rollout-changed" : "catalog.republished",
                target: "version \(version)",
                details: [
                    "fingerprint": .string(fingerprint), "rollout": .int(rollout),
                    "previousRollout": .int(same.rollout),
                ])
        } else {
            var problems = check.problems
            if source == .published,
                let unsigned = try await signatureProblem(text, signatures, app: app, time: time, connection)
            {
                problems.append(unsigned)
            }
            guard problems.isEmpty else { return .refused(problems) }
            try await connection.query(
                """
                INSERT INTO catalogs (app, version, source, fingerprint, document, rollout, recorded_at,
                    recorded_by, signatures)
                VALUES (\(app), \(Int64(version)), \(source.rawValue), \(fingerprint), \(text),
                    \(Int32(rollout)), \(time),
                        \(actor.name), \(try signatures.tourValue.jsonText()))
                """, logger: logger)
            audit = .init(
                at: time, actor: actor, app: app,
                action: source == .compiled ? "catalog.registered" : "catalog.published",
                target: "version \(version)",
                details: .members([
                    "fingerprint": .string(fingerprint),
                    "rollout": source == .published ? .int(rollout) : nil,
                    "signedBy": source == .published ? .list(signatures.map { .string($0.key) }) : nil,
                ]))
        }
        try await AuditLog.append(audit, on: connection, logger: logger)
        return .stored(try await Self.entry(app: app, version: version, on: connection, logger: logger))
    }

    /// The entry of `version`, which this transaction has just written: missing, it is the
    /// server's mistake (a 500), not a trap.
    private static func entry(
        app: String, version: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> Entry {
        let stored = try await all(app: app, on: connection, logger: logger)
        guard let entry = stored.first(where: { $0.version == version }) else {
            throw CatalogStoreInvariant(
                "version \(version) of \(app) is not in the transaction that wrote it")
        }
        return entry
    }

    /// Why `signatures` do not let `text` be published, or nil: one of them must be good and by a
    /// registered key of the app that is not retired. The server checks what it can (a device
    /// checks again against the keys compiled into it, which the server cannot change).
    private func signatureProblem(
        _ text: String, _ signatures: [CatalogSignature], app: String, time: Double,
        _ connection: PostgresConnection
    ) async throws -> String? {
        let keys = try await PublicationKeyStore.all(app: app, on: connection, logger: logger).map(\.key)
        guard !keys.isEmpty else {
            return
                """
                \(app) has no publication key registered: make one with `onboarding-server keys new --app \
                \(app)`, 
                """
                    + """
                    register its public half (`onboarding-server keys register`) and compile it into the app \
                    (Docs/Security.md)
                    """
        }
        switch PublicationSigning.verdict(document: text, signatures: signatures, trusted: keys, now: time) {
        case .signed: return nil
        case .refused(let why):
            return "the document is not signed by a registered publication key of \(app) (\(why)): "
                + """
                sign it where the key is kept (`onboarding-server publish --key FILE`, \
                or `onboarding-server keys sign`)
                """
        }
    }
}
