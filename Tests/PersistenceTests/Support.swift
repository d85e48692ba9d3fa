import CSQLite
import Foundation
import Persistence
import TourCodec
import TourFixtures
import TourRuntime

/// A fresh folder under the system's temporary directory, removed when the test is done with it.
final class TemporaryFolder {
    let url: URL

    init() throws {
        url = Scratch.folder.appendingPathComponent(
            "persistence-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Every table's rows as text, and the bytes of the database files: what "unchanged" means.
func fingerprint(_ path: String) throws -> [String] {
    var parts: [String] = []
    for suffix in ["", "-wal"] {
        let file = path + suffix
        if let data = FileManager.default.contents(atPath: file) {
            parts.append("\(suffix):\(data.hashValue):\(data.count)")
        }
    }
    return parts
}

func tableDump(_ database: OnboardingDatabase, app: String) throws -> String {
    let flows = try database.storedFlows(app: app)
    let journal = try database.journal(app: app)
    let sorted = flows.sorted { $0.key < $1.key }.map { ($0.key, $0.value.sorted { $0.key < $1.key }) }
    return "\(sorted)\n\(journal)"
}

/// A product made of the fixture catalog, with a domain handler that stores product effects.
struct FixtureHandler: ProductHandler {
    var domainState: DomainStateVocabulary {
        DomainStateVocabulary(
            format: 1,
            [.init("effects", .list, "every product effect applied"), .init("bank", .any, "activate's bank")])
    }

    func apply(_ effect: FixtureEffect, to domain: inout [String: TourValue], now: Date) {
        var log = domain["effects"]?.listValue ?? []
        log.append(.object(["name": .string(effect.name), "payload": .object(effect.payload)]))
        domain["effects"] = .list(log)
        if effect.name == "activate" { domain["bank"] = effect.payload["bank"] }
    }

    nonisolated(nonsending) func perform(
        request name: String, payload: [String: TourValue], secrets: [String: Secret]
    ) async
        -> GateStatus
    {
        payload["username"] == "offline" ? .unavailable : .granted
    }
}

func fixtureProduct(app: String = "test") -> Product {
    Product(
        catalog: Fixtures.catalog(app: app), handler: FixtureHandler(), currentVersion: "2.5",
        launchSignals: [])
}

/// Events a user of the fixture catalog could send, right or wrong.
func randomEvent(using rng: inout SplitMix64) -> (TourEvent?, wait: Double) {
    let actions: [(String, [String: String])] = [
        ("next", [:]), ("next", [:]), ("next", [:]), ("back", [:]), ("skip", [:]), ("tapTarget", [:]),
        ("save", ["name": "Career"]), ("dismiss", [:]), ("press", ["week": "3"]), ("saveMark", [:]),
        ("choose", ["apps": "A,B"]), ("choose", ["apps": ""]), ("select", ["level": "hard"]),
        ("grantScreenTime", [:]),
        ("grantHealth", [:]), ("go", [:]), ("connect", ["username": "W1AW", "password": "hunter2"]),
        ("connect", ["username": "offline", "password": "pw"]), ("later", [:]), ("close", [:]),
        ("backdrop", [:]),
        ("swipeLeft", [:]), ("fly", [:]),
    ]
    switch Int.random(in: 0..<20, using: &rng) {
    case 0: return (.appLaunched(version: ["1.5", "2.0", "2.5", nil].anyElement(using: &rng)), 0)
    case 1: return (.signal("revealed"), 0)
    case 2: return (.featureVisited(["feature", "dashboard"].anyElement(using: &rng)), 0)
    case 3: return (Int.random(in: 0..<4, using: &rng) == 0 ? .resetRequested(nil) : .replayRequested(nil), 0)
    case 4: return (nil, [0.2, 0.5, 1.5, 3].anyElement(using: &rng))
    default:
        let (name, parameters) = actions.anyElement(using: &rng)
        return (.actionPerformed(name, parameters: parameters), 0)
    }
}

/// Another program's connection to a database file, through SQLite's C API: what "a raw write
/// another tool made" means in these tests (values read back as text).
final class RawSQL {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private var handle: OpaquePointer?

    init(_ path: String) throws {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK
        else {
            throw Failure(description: "cannot open \(path)")
        }
        sqlite3_busy_timeout(handle, 5_000)
    }

    deinit { sqlite3_close_v2(handle) }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw Failure(description: String(cString: sqlite3_errmsg(handle)))
        }
    }

    /// Every row of one statement, each column as text (nil for NULL).
    func rows(_ sql: String) throws -> [[String?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            throw Failure(description: String(cString: sqlite3_errmsg(handle)))
        }
        defer { sqlite3_finalize(statement) }
        var rows: [[String?]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append(
                (0..<sqlite3_column_count(statement)).map { column in
                    sqlite3_column_text(statement, column).map { String(cString: $0) }
                })
        }
        return rows
    }
}
