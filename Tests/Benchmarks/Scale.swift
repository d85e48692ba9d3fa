import Foundation
import Persistence
import TourRuntime

/// Files with many users, built from what each product's flow really writes: user u is on product
/// u % 5, k events into its flow (k cycles through every prefix, from fresh to finished), with
/// that prefix's flow rows, domain rows and journal rows.
enum Scale {
    struct Template {
        var flows: [(flow: String, status: String, step: String?, json: String, catalogVersion: Int?)] = []
        var domain: [(key: String, json: String)] = []
        var journal: [EventWrites] = []
    }

    static func templates(start: Date) throws -> [[Template]] {
        try Journey.all.map { journey in
            let writes = try journey.writes(from: start)
            var result = [Template()]
            var current = Template()
            for write in writes {
                for flow in write.flows {
                    current.flows.removeAll { $0.flow == flow.flow }
                    current.flows.append(flow)
                }
                for value in write.domain {
                    current.domain.removeAll { $0.key == value.key }
                    current.domain.append(value)
                }
                current.journal.append(write)
                result.append(current)
            }
            return result
        }
    }

    static let products = Journey.all.map(\.perUser)

    static func product(of user: Int) -> Int { user % products.count }

    static func populate(path: String, users: Int, start: Date) throws {
        let templates = try templates(start: start)
        let raw = try RawSQLite(path: path)
        let now = start.timeIntervalSince1970
        for app in products.map(\.catalog.app) {
            try raw.run("INSERT OR IGNORE INTO install_state (app, app_version) VALUES (?, ?)", [app, "1.0"])
        }
        try raw.run("BEGIN", [])
        for user in 0..<users {
            let index = product(of: user)
            let options = templates[index]
            let template = options[(user / products.count) % options.count]
            let app = products[index].catalog.app
            let name = "u\(user)"
            for flow in template.flows {
                try raw.run(
                    """
                    INSERT INTO flow_state (app, subject, flow, status, step, state_json, updated_at) \
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                    [app, name, flow.flow, flow.status, flow.step, flow.json, now])
            }
            for value in template.domain {
                try raw.run(
                    "INSERT INTO domain_state (app, subject, key, value_json) VALUES (?, ?, ?, ?)",
                    [app, name, value.key, value.json])
            }
            for write in template.journal { try insertJournal(raw, app: app, user: name, write) }
            if user % 5_000 == 4_999 {
                try raw.run("COMMIT", [])
                try raw.run("BEGIN", [])
            }
        }
        try raw.run("COMMIT", [])
        try raw.exec("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    static func insertJournal(_ raw: RawSQLite, app: String, user: String, _ write: EventWrites) throws {
        let j = write.journal
        try raw.run(
            """
            INSERT INTO journal (time, app, user, flow, step, event, outcome, event_json, context_json, \
            effects_json, catalog_version, facts_json, states_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, \
            ?, ?, ?, ?)
            """,
            [
                j.time, app, user, j.flow, j.step, j.event, j.outcome, j.eventJSON, j.contextJSON,
                j.effectsJSON, Double(j.catalogVersion), j.factsJSON, j.statesJSON,
            ])
    }

    /// "What does this user see at launch": the session read from the file, and the card and flow
    /// summaries the engine makes of it, for random users. Seconds per lookup, sorted.
    static func lookups(path: String, users: Int, samples: Int) throws -> [Double] {
        let database = try OnboardingDatabase.open(path: path)
        let engines = products.map(\.engine)
        var generator = SystemRandomNumberGenerator()
        var latencies: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<samples {
            let user = Int.random(in: 0..<users, using: &generator)
            let index = product(of: user)
            let product = products[index]
            let began = clock.now
            let session = try database.session(
                SessionKey(app: product.catalog.app, user: "u\(user)"), scopes: product.scopes)
            let context = product.context(
                domain: session.domain, now: session.virtualNow ?? Date(), device: [:])
            let card = engines[index].card(in: session.tour, context: context)
            let summaries = engines[index].summaries(of: session.tour, context: context)
            latencies.append(seconds(clock.now - began))
            precondition(summaries.count == product.catalog.flows.count || card != nil)
        }
        return latencies.sorted()
    }

    /// A LockedIn journal of `events` rows: whole onboardings of as many users as it takes.
    static func populateJournal(path: String, events: Int, start: Date) throws -> Int {
        let writes = try Journey.all[1].writes(from: start)
        let raw = try RawSQLite(path: path)
        try raw.run("BEGIN", [])
        var rows = 0
        var user = 0
        while rows < events {
            for write in writes where rows < events {
                try insertJournal(raw, app: "lockedin", user: "u\(user)", write)
                rows += 1
            }
            user += 1
            if user % 5_000 == 0 {
                try raw.run("COMMIT", [])
                try raw.run("BEGIN", [])
            }
        }
        try raw.run("COMMIT", [])
        try raw.exec("PRAGMA wal_checkpoint(TRUNCATE)")
        return rows
    }

    /// The rebuild's floor: the same rows read through SQLite's C API (the user and the recorded
    /// states of every LockedIn row, in order), each byte of the states touched, nothing parsed.
    static func scanRecordedStates(path: String) throws -> Int {
        let raw = try RawSQLite(path: path)
        return try raw.scan(
            "SELECT user, states_json FROM journal WHERE app = ? AND id > ? ORDER BY id", ["lockedin", 0.0])
    }

    static func rebuild(path: String) throws -> Int {
        let database = try OnboardingDatabase.open(path: path)
        return try JournalReplay.rebuild(
            app: "lockedin", engine: Journey.all[1].perUser.engine, from: database
        ).count
    }
}

/// Runs a command 15 times under /usr/bin/time: the median wall time and the largest peak memory.
enum ColdStart {
    static func run(executable: String, arguments: [String]) -> (seconds: Double, peakKB: Int) {
        var walls: [Double] = []
        var peak = 0
        let clock = ContinuousClock()
        for _ in 0..<15 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
            process.arguments = ["-f", "%M", executable] + arguments
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            let began = clock.now
            guard (try? process.run()) != nil else { return (0, 0) }
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            walls.append(seconds(clock.now - began))
            let last =
                String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
            peak = max(peak, Int(last.trimmingCharacters(in: .whitespaces)) ?? 0)
        }
        return (percentile(walls.sorted(), 0.5), peak)
    }

    /// The reads `status` makes, as SQL for the shell.
    static func equivalentQuery(user: String) -> String {
        """
        SELECT subject, flow, state_json FROM flow_state WHERE app = 'lockedin' AND subject IN ('@install', \
        '\(user)');
        SELECT app_version, virtual_now FROM install_state WHERE app = 'lockedin';
        SELECT key, value_json FROM domain_state WHERE app = 'lockedin' AND subject = '\(user)';
        SELECT key, value_json FROM device_state WHERE app = 'lockedin';
        """
    }
}
