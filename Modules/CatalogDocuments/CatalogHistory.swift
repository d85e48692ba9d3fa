import TourCodec
import TourCore

/// A product's catalog release history: the canonical document of every catalog version it shipped
/// (`Apps/<Product>/Onboarding/releases/<version>.json`, written by `scripts/record-catalog`,
/// compiled into the product). ``problems(today:)`` holds today's catalog against it, so a release
/// that would strand users cannot pass `APP check` or the tests, whatever its version says:
///
/// - today's catalog differs from the newest recorded document and its version was not raised;
/// - the version was raised past a version that was never recorded (or went down);
/// - a step of any recorded version is neither in today's catalog nor placed by the migrations
///   declared since that version (a user parked on version 1 for a year must still be placed by
///   version 5), or a flow is gone and no migration removes it;
/// - a declared migration names a step, action or flow that its versions do not have;
/// - a recorded file is not the canonical document of its version (edited by hand, or unreadable).
public struct CatalogHistory: Sendable {
    /// The recorded documents that read, by version.
    public let releases: [Int: CatalogDocument]
    /// The recorded text of each version, as compiled in.
    public let texts: [Int: String]
    private let readProblems: [CatalogProblem]

    public init(_ recorded: [RecordedCatalog], app: String) {
        var releases: [Int: CatalogDocument] = [:]
        var texts: [Int: String] = [:]
        var problems: [CatalogProblem] = []
        func refuse(_ file: String, _ detail: String) {
            problems.append(
                CatalogProblem(
                    kind: .unreadableRelease, flow: nil, step: nil, path: "releases/\(file)", detail: detail))
        }
        for file in recorded.sorted(by: { $0.file < $1.file }) {
            guard file.file.hasSuffix(".json"), let version = Int(file.file.dropLast(5)), version >= 1 else {
                refuse(
                    file.file,
                    """
                    a release file is named VERSION.json (written by scripts/record-catalog), \
                    not \(file.file)
                    """
                )
                continue
            }
            let document: CatalogDocument
            do {
                document = try CatalogDocument(text: file.text)
            } catch {
                refuse(file.file, "not a catalog document: \(error)")
                continue
            }
            guard document.catalog.version == version, document.catalog.app == app else {
                refuse(
                    file.file,
                    """
                    holds \(document.catalog.app)'s catalog version \(document.catalog.version), \
                    not \(app)'s version \(version)
                    """
                )
                continue
            }
            guard (try? document.text()) == file.text else {
                refuse(
                    file.file,
                    """
                    is not the canonical document of version \(version) (edited by hand?): \
                    a recorded release is written by scripts/record-catalog and never changes; \
                    restore it from git
                    """
                )
                continue
            }
            releases[version] = document
            texts[version] = file.text
        }
        self.releases = releases
        self.texts = texts
        self.readProblems = problems
    }

    /// A server's advice for a version it does not hold: register the binary's whole history.
    static func unregistered(_ product: String, _ version: Int, missing: String, _ app: String) -> String {
        """
        \(product)'s catalog is version \(version), but \(missing) registered on this server: \
        register every version compiled into the binary, oldest first, in one step (`\(app) catalog \
        --history --json > history.json`, then `onboarding-server register --app \(app) history.json`)
        """
    }

    /// The recorded versions, oldest first.
    public var versions: [Int] { releases.keys.sorted() }

    /// Every problem of the history and of today's catalog against it (see the type).
    /// - Parameter allowingGapsBelow: versions below it may be missing (a list of live publications
    ///   leaves withdrawn versions out); one at or above it is still a gap.
    /// Where the history was given, for what a `missing_release` problem advises.
    public enum Keeper: Sendable {
        /// A product's build or `check` (its recorded releases, and a server's list with `--published`).
        case build
        /// A server, which holds every version registered or published.
        case server
    }

    /// - Parameter keeper: where the history is kept, for the advice of a missing version.
    public func problems(today: CatalogDocument, allowingGapsBelow: Int? = nil, keeper: Keeper = .build)
        -> [CatalogProblem]
    {
        var problems = readProblems
        let catalog = today.catalog
        let version = catalog.version
        let product = catalog.name
        func add(
            _ kind: CatalogProblem.Kind, _ flow: FlowID?, _ step: StepID?, _ path: String, _ detail: String
        ) {
            problems.append(CatalogProblem(kind: kind, flow: flow, step: step, path: path, detail: detail))
        }
        let versions = self.versions
        /// Why version `missing` (nil: every earlier one) is missing, with the advice for where the
        /// history is kept.
        func missingRelease(_ missing: Int?) -> String {
            switch (keeper, missing) {
            case (.build, let missing?):
                """
                \(product)'s catalog is version \(version), but version \(missing) is in no history given: \
                if it shipped in a binary, record it (scripts/record-catalog); if it was published, \
                check against the server's list (--published FILE, the JSON of GET /v1/apps/APP/catalogs); \
                else give this document version \(missing)
                """
            case (.build, nil):
                """
                \(product)'s catalog is version \(version), but no earlier version is in any history given: \
                if one shipped in a binary, record it (scripts/record-catalog); if one was published, \
                check against the server's list (--published FILE)
                """
            case (.server, let missing):
                Self.unregistered(
                    product, version, missing: missing.map { "version \($0) is" } ?? "no earlier version is",
                    catalog.app)
            }
        }
        // The versions in order: none missing between the first recorded and today's.
        if let newest = versions.last {
            if version < newest {
                add(
                    .versionBehindHistory, nil, nil, "version",
                    """
                    \(product)'s catalog is version \(version), older than its recorded release \(newest): \
                    a catalog's version only rises
                    """
                )
            }
            let first = versions.first ?? newest
            for missing in first..<max(first, version)
            where releases[missing] == nil && missing >= (allowingGapsBelow ?? 0) {
                add(.missingRelease, nil, nil, "version", missingRelease(missing))
            }
        } else if version > 1 {
            add(.missingRelease, nil, nil, "version", missingRelease(nil))
        }
        // Today's catalog against the recorded document of its own version.
        if let recorded = releases[version], let text = try? today.text(), text != texts[version] {
            let diff = CatalogDiff(from: recorded, to: today)
            let next = version + 1
            for change in diff.changes {
                var advice = "raise the catalog's version to \(next)"
                if change.kind == .stepsReordered || change.kind == .stepAdded {
                    advice += " (no migration needed: runs stay on their step)"
                } else if change.kind == .stepRemoved || change.kind == .flowRemoved {
                    advice +=
                        change.kind == .flowRemoved
                        ? """
                         and declare CatalogMigration(from: \(version), removedFlows: \
                        [\"\(change.flow?.rawValue ?? "")\"])
                        """
                        : """
                         and declare CatalogMigration(from: \(version), [\"\(change.flow?.rawValue ?? "")\
                        \": FlowChanges(renamedSteps: [\"\(change.step?.rawValue ?? "")\": \
                        NEW] or removedSteps: [\"\(change.step?.rawValue ?? "")\": \
                        .goOnAtNext or .restart])])
                        """
                }
                add(
                    .changedWithoutVersion, change.flow, change.step, Self.path(change.flow, change.step),
                    """
                    \(product)'s catalog differs from its recorded release \(version) and is still version \
                    \(version): \(change.detail); \(advice)
                    """
                )
            }
        }
        // Every step of every recorded version placed by today's catalog.
        var reported: Set<String> = []
        for old in versions where old < version {
            guard let release = releases[old] else { continue }
            for flow in release.catalog.flows {
                if catalog.flow(flow.id) == nil {
                    guard
                        !catalog.migrations(after: old).contains(where: { $0.removedFlows.contains(flow.id) }
                        ),
                        reported.insert("flow \(flow.id)").inserted
                    else { continue }
                    let last = lastVersion(having: flow.id, from: old, before: version)
                    add(
                        .unplacedFlow, flow.id, nil, "flows[\(flow.id)]",
                        """
                        \(product)'s flow \(flow.id) (in release \(old)) is not in version \(version) and no \
                        migration removes it: declare CatalogMigration(from: \(last), removedFlows: \
                        [\"\(flow.id)\"])
                        """
                    )
                    continue
                }
                for step in flow.steps where catalog.place(step.id, of: flow.id, since: old) == .unknown {
                    let (name, last) = lastPlace(of: step.id, in: flow.id, from: old, today: catalog)
                    guard reported.insert("\(flow.id) \(name) \(last)").inserted else { continue }
                    add(
                        .unplacedStep, flow.id, name, "flows[\(flow.id)].steps[\(name)]",
                        """
                        \(product)'s step \(name) of flow \(flow.id) (in release \(last)\
                        \(last == old ? "" : ", \(step.id) in release \(old)")) is neither in version \
                        \(version) nor placed by a declared migration, so users on it would lose their place \
                        (moved undeclared, by the flow's unplacedStep policy): declare \
                        CatalogMigration(from: \(last), [\"\(flow.id)\": FlowChanges(renamedSteps: \
                        [\"\(name)\": NEW] or removedSteps: [\"\(name)\": .goOnAtNext or .restart])])
                        """
                    )
                }
            }
        }
        problems += migrationProblems(today)
        return problems
    }

    /// The name a step of `version` has in each later recorded version, following declared renames,
    /// and the last version (before `today`) that still has it.
    private func lastPlace(of step: StepID, in flow: FlowID, from version: Int, today: TourCatalog) -> (
        StepID, Int
    ) {
        var name = step
        var last = (step, version)
        var current = version
        while current + 1 < today.version {
            if let changes = today.migrations.first(where: { $0.from == current })?.flows[flow] {
                name = changes.renamedSteps[name] ?? name
            }
            current += 1
            guard let release = releases[current] else { continue }
            if release.catalog.flow(flow)?.step(name) != nil { last = (name, current) } else { break }
        }
        return last
    }

    private func lastVersion(having flow: FlowID, from version: Int, before today: Int) -> Int {
        var last = version
        for candidate in version..<today where releases[candidate]?.catalog.flow(flow) != nil {
            last = candidate
        }
        return last
    }

    /// Declared migrations that name what their versions do not have.
    private func migrationProblems(_ today: CatalogDocument) -> [CatalogProblem] {
        var problems: [CatalogProblem] = []
        let catalog = today.catalog
        var seen: Set<Int> = []
        for (index, migration) in catalog.migrations.enumerated() {
            let path = "migrations[\(index)]"
            func add(
                _ flow: FlowID?, _ step: StepID?, _ detail: String,
                kind: CatalogProblem.Kind = .unknownMigrationReference
            ) {
                problems.append(
                    CatalogProblem(
                        kind: kind, flow: flow, step: step, path: path,
                        detail: "\(catalog.name)'s CatalogMigration(from: \(migration.from)) \(detail)"))
            }
            if !seen.insert(migration.from).inserted {
                add(nil, nil, "is declared twice", kind: .migrationOutOfRange)
            }
            guard migration.from >= 1, migration.from < catalog.version else {
                add(
                    nil, nil, "is not older than the catalog's version \(catalog.version)",
                    kind: .migrationOutOfRange)
                continue
            }
            // Only versions the history (or today's catalog) knows can be checked.
            guard let before = releases[migration.from]?.catalog else { continue }
            let after =
                migration.from + 1 == catalog.version ? catalog : releases[migration.from + 1]?.catalog
            let fromName = "version \(migration.from)"
            let toName = "version \(migration.from + 1)"
            for flow in migration.removedFlows.sorted() {
                if before.flow(flow) == nil {
                    add(flow, nil, "removes flow \(flow), which \(fromName) does not have")
                }
                if let after, after.flow(flow) != nil {
                    add(flow, nil, "removes flow \(flow), which \(toName) still has")
                }
            }
            for (id, changes) in migration.flows.sorted(by: { $0.key < $1.key }) {
                guard let old = before.flow(id) else {
                    add(
                        id, nil,
                        """
                        changes flow \(id), which \(fromName) does not have\
                        \(suggest(id.rawValue, before.flows.map(\.id.rawValue)))
                        """
                    )
                    continue
                }
                let new = after?.flow(id)
                let oldSteps = old.steps.map(\.id.rawValue)
                for (from, to) in changes.renamedSteps.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                    if old.step(from) == nil {
                        add(
                            id, from,
                            """
                            renames step \(from), which \(fromName) of flow \(id) does not have\
                            \(suggest(from.rawValue, oldSteps))
                            """
                        )
                    }
                    if let new, new.step(to) == nil {
                        add(
                            id, to,
                            """
                            renames \(from) to step \(to), which \(toName) of flow \(id) does not have\
                            \(suggest(to.rawValue, new.steps.map(\.id.rawValue)))
                            """
                        )
                    }
                }
                for step in changes.removedSteps.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
                    if old.step(step) == nil {
                        add(
                            id, step,
                            """
                            removes step \(step), which \(fromName) of flow \(id) does not have\
                            \(suggest(step.rawValue, oldSteps))
                            """
                        )
                    }
                    if let new, new.step(step) != nil {
                        add(id, step, "removes step \(step), which \(toName) of flow \(id) still has")
                    }
                }
                let oldActions = Set(old.steps.flatMap { $0.actions.map(\.name) })
                let newActions = Set(new?.steps.flatMap { $0.actions.map(\.name) } ?? [])
                for (from, to) in changes.renamedActions.sorted(by: { $0.key < $1.key }) {
                    if !oldActions.contains(from) {
                        add(
                            id, nil,
                            """
                            renames action \(from), which \(fromName) of flow \(id) does not have\
                            \(suggest(from, oldActions.sorted()))
                            """
                        )
                    }
                    if new != nil, !newActions.contains(to) {
                        add(
                            id, nil,
                            """
                            renames \(from) to action \(to), which \(toName) of flow \(id) does not have\
                            \(suggest(to, newActions.sorted()))
                            """
                        )
                    }
                }
            }
        }
        return problems
    }

    private func suggest(_ name: String, _ names: [String]) -> String {
        NameSuggestion.nearest(to: name, in: names).map { " (did you mean '\($0)'?)" } ?? ""
    }

    static func path(_ flow: FlowID?, _ step: StepID?) -> String {
        guard let flow else { return "" }
        return "flows[\(flow)]" + (step.map { ".steps[\($0)]" } ?? "")
    }
}
