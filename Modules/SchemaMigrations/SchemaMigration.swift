/// The versioned schema of a database, the same shape on the device (SQLite, `Persistence`) and on
/// the server (PostgreSQL, `OnboardingServer`): migrations in order, each with an id and never
/// changed after it lands, the ids applied recorded in the database itself.
///
/// Each side runs them the same way: every pending migration in its own transaction that first
/// takes the database's write lock (SQLite's `BEGIN IMMEDIATE`, a PostgreSQL advisory lock), looks
/// again whether another process applied it meanwhile, runs its statements and records its id. Only
/// the transaction and the table differ, so only they are written per side.

/// One migration: an id that names it forever, and the statements it runs, in order, in one
/// transaction.
public struct SchemaMigration: Sendable, Equatable {
    public let id: String
    public let statements: [String]

    public init(_ id: String, _ statements: [String]) {
        self.id = id
        self.statements = statements
    }

    /// What a freeze test holds a landed migration to: FNV-1a over its statements' UTF-8, each
    /// followed by a zero byte (stable across runs and platforms, unlike `hashValue`).
    public var fingerprint: UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for statement in statements {
            for byte in statement.utf8 + [0] {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
        }
        return hash
    }
}

/// A database's migrations in the order they apply, and what a database that recorded some of them
/// still needs.
public struct SchemaHistory: Sendable {
    public let migrations: [SchemaMigration]

    /// - Precondition: no id appears twice (a second migration with an id already applied would
    ///   never run).
    public init(_ migrations: [SchemaMigration]) {
        precondition(Set(migrations.map(\.id)).count == migrations.count, "two migrations share an id")
        self.migrations = migrations
    }

    /// The ids, in order.
    public var ids: [String] { migrations.map(\.id) }

    /// The migrations not in `applied`, in order, up to and including `last` when given.
    public func pending(applied: some Sequence<String>, through last: String? = nil) -> [SchemaMigration] {
        let applied = Set(applied)
        var pending: [SchemaMigration] = []
        for migration in migrations {
            if !applied.contains(migration.id) { pending.append(migration) }
            if migration.id == last { break }
        }
        return pending
    }

    /// Applied ids this history does not have: a newer build migrated the database, and this one
    /// must not write to it.
    public func unknown(applied: some Sequence<String>) -> [String] {
        let known = Set(ids)
        return applied.filter { !known.contains($0) }
    }
}

extension SchemaHistory {
    /// What a freeze test reports against `landed` (each landed migration's id and fingerprint,
    /// in order): a landed migration removed, renamed, moved or changed, and a migration not listed
    /// yet, with the line to add. Empty when every landed migration is as it landed.
    public func freezeProblems(landed: [(id: String, fingerprint: UInt64)]) -> [String] {
        var problems: [String] = []
        if migrations.count < landed.count { problems.append("a landed migration was removed") }
        for (landed, migration) in zip(landed, migrations) {
            if migration.id != landed.id { problems.append("migration \(landed.id) was renamed or moved") }
            if migration.fingerprint != landed.fingerprint {
                problems.append(
                    "migration \(landed.id) changed after it landed: write a new migration instead")
            }
        }
        // A new migration is listed in the change that adds it: from then on it is held as it landed.
        for migration in migrations.dropFirst(landed.count) {
            problems.append(
                "migration \(migration.id) is not in `landed`: add (\"\(migration.id)\", "
                    + "0x\(String(migration.fingerprint, radix: 16))) in the change that adds it")
        }
        return problems
    }
}
