import Logging
import PostgresNIO
import TourCodec

/// `GET /v1/apps/{app}/report`.
public struct AppReport: Equatable, Sendable {
    public struct Step: Equatable, Sendable {
        public var step: String
        /// Its place in the run when first entered (1-based).
        public var index: Int
        /// Accounts that reached it on any device.
        public var accounts: Int

        package init(step: String, index: Int, accounts: Int) {
            self.step = step
            self.index = index
            self.accounts = accounts
        }
    }

    public struct Flow: Equatable, Sendable {
        public var flow: String
        /// Accounts by their merged record: `notStarted`, `shown`, `skipped`, `completed`.
        public var accounts: [String: Int] = [:]
        /// Accounts with a run started on some device.
        public var started = 0
        /// Accounts that completed (skipped) it on some device, as the devices' facts say.
        public var completedHere = 0
        public var skippedHere = 0
        public var devices = 0
        public var steps: [Step] = []

        package init(flow: String) { self.flow = flow }
    }

    /// Facts no catalog of the app declares (its tracking plan), by what they name: never counted
    /// in a funnel, listed so a team sees a typo in a new build the day it ships.
    public struct Unplanned: Equatable, Sendable {
        public var flow: String
        /// The step or experiment named ("" for a fact of the flow itself).
        public var step: String
        public var kind: String
        public var subjects: Int
        public var devices: Int
        public var facts: Int
        public var firstAt: Double
        public var lastAt: Double

        package init(
            flow: String, step: String, kind: String, subjects: Int, devices: Int, facts: Int,
            firstAt: Double, lastAt: Double
        ) {
            (self.flow, self.step, self.kind) = (flow, step, kind)
            (self.subjects, self.devices, self.facts, self.firstAt, self.lastAt) = (
                subjects, devices, facts, firstAt, lastAt
            )
        }
    }

    public var app: String
    public var accounts: Int
    public var devices: Int
    public var flows: [Flow]
    public var unplanned: [Unplanned] = []

    package init(app: String, accounts: Int, devices: Int, flows: [Flow]) {
        self.app = app
        self.accounts = accounts
        self.devices = devices
        self.flows = flows
    }
}

extension AppReport: TourValueCodable {
    public var tourValue: TourValue {
        // `unplanned` only when there are such facts: the report of an app without any has the
        // form it always had (WireFormTests).
        .members([
            "app": .string(app), "accounts": .int(accounts), "devices": .int(devices),
            "flows": flows.tourValue,
            "unplanned": unplanned.isEmpty ? nil : unplanned.tourValue,
        ])
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "report")
        self.init(
            app: try wire.string("app"), accounts: try wire.int("accounts"), devices: try wire.int("devices"),
            flows: try wire.list("flows"))
        // Added in 0.25: a report of an older server has none.
        if wire.value("unplanned") != nil { unplanned = try wire.list("unplanned") }
    }
}

extension AppReport.Unplanned: TourValueCodable {
    public var tourValue: TourValue {
        [
            "flow": .string(flow), "step": .string(step), "kind": .string(kind), "subjects": .int(subjects),
            "devices": .int(devices), "facts": .int(facts), "firstAt": .double(firstAt),
            "lastAt": .double(lastAt),
        ]
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "unplanned facts")
        self.init(
            flow: try wire.string("flow"), step: try wire.string("step"), kind: try wire.string("kind"),
            subjects: try wire.int("subjects"), devices: try wire.int("devices"),
            facts: try wire.int("facts"),
            firstAt: try wire.double("firstAt"), lastAt: try wire.double("lastAt"))
    }
}

extension AppReport.Flow: TourValueCodable {
    public var tourValue: TourValue {
        [
            "flow": .string(flow), "accounts": .object(accounts.mapValues(TourValue.int)),
            "started": .int(started),
            "completedHere": .int(completedHere), "skippedHere": .int(skippedHere), "devices": .int(devices),
            "steps": steps.tourValue,
        ]
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "report flow")
        self.init(flow: try wire.string("flow"))
        accounts = try wire.object("accounts").mapValues { count in
            guard let count = count.intValue else {
                throw TourValueReader.mismatch("a count", count, path: [MemberKey("accounts")])
            }
            return count
        }
        started = try wire.int("started")
        completedHere = try wire.int("completedHere")
        skippedHere = try wire.int("skippedHere")
        devices = try wire.int("devices")
        steps = try wire.list("steps")
    }
}

extension AppReport.Step: TourValueCodable {
    public var tourValue: TourValue {
        ["step": .string(step), "index": .int(index), "accounts": .int(accounts)]
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "report step")
        self.init(
            step: try wire.string("step"), index: try wire.int("index"), accounts: try wire.int("accounts"))
    }
}

extension AppReport {
    /// The funnel of every flow of `app` across all accounts and devices, read from the aggregates
    /// the catch-up keeps (``InsightsSchema``): a few hundred rows whatever the number of facts.
    /// Without the facts kept apart (`unplanned`: the tracking plan's, not an aggregate).
    package static func read(app: String, on connection: PostgresConnection, logger: Logger) async throws
        -> AppReport
    {
        var flows: [String: AppReport.Flow] = [:]
        let standings = try await connection.query(
            """
            SELECT flow, standing, sum(accounts)::bigint FROM insight_standings WHERE app = \(app)
            GROUP BY flow, standing HAVING sum(accounts) > 0
            """, logger: logger)
        for try await (flow, standing, count) in standings.decode((String, String, Int64).self) {
            flows[flow, default: AppReport.Flow(flow: flow)].accounts[standing] = Int(count)
        }
        let milestones = try await connection.query(
            """
            SELECT flow, milestone, sum(subjects)::bigint FROM insight_counts
            WHERE app = \(app) AND milestone IN ('started', 'completed', 'skipped', 'device') GROUP BY flow,
                milestone
            """, logger: logger)
        for try await (flow, milestone, count) in milestones.decode((String, String, Int64).self) {
            switch milestone {
            case "started": flows[flow, default: AppReport.Flow(flow: flow)].started = Int(count)
            case "completed": flows[flow, default: AppReport.Flow(flow: flow)].completedHere = Int(count)
            case "skipped": flows[flow, default: AppReport.Flow(flow: flow)].skippedHere = Int(count)
            default: flows[flow, default: AppReport.Flow(flow: flow)].devices = Int(count)
            }
        }
        let steps = try await connection.query(
            """
            SELECT flow, step, min(step_index), sum(subjects)::bigint FROM insight_counts
            WHERE app = \(app) AND milestone = 'step' GROUP BY flow, step ORDER BY flow, 3, step
            """, logger: logger)
        for try await (flow, step, index, accounts) in steps.decode((String, String, Int64, Int64).self) {
            flows[flow, default: AppReport.Flow(flow: flow)].steps.append(
                AppReport.Step(step: step, index: Int(index), accounts: Int(accounts)))
        }
        let totals = try await connection.query(
            "SELECT kind, sum(subjects)::bigint FROM insight_totals WHERE app = \(app) GROUP BY kind",
            logger: logger)
        var accounts = 0
        var devices = 0
        for try await (kind, count) in totals.decode((String, Int64).self) {
            if kind == "account" { accounts = Int(count) } else { devices = Int(count) }
        }
        return AppReport(
            app: app, accounts: accounts, devices: devices,
            flows: flows.values.sorted { $0.flow < $1.flow })
    }
}
