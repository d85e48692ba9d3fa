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

    public var app: String
    public var accounts: Int
    public var devices: Int
    public var flows: [Flow]

    package init(app: String, accounts: Int, devices: Int, flows: [Flow]) {
        self.app = app
        self.accounts = accounts
        self.devices = devices
        self.flows = flows
    }
}

extension AppReport: TourValueCodable {
    public var tourValue: TourValue {
        ["app": .string(app), "accounts": .int(accounts), "devices": .int(devices), "flows": flows.tourValue]
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "report")
        self.init(
            app: try wire.string("app"), accounts: try wire.int("accounts"), devices: try wire.int("devices"),
            flows: try wire.list("flows"))
    }
}

extension AppReport.Flow: TourValueCodable {
    public var tourValue: TourValue {
        [
            "flow": .string(flow), "accounts": .object(accounts.mapValues(TourValue.int)), "started": .int(started),
            "completedHere": .int(completedHere), "skippedHere": .int(skippedHere), "devices": .int(devices),
            "steps": steps.tourValue,
        ]
    }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "report flow")
        self.init(flow: try wire.string("flow"))
        accounts = try wire.object("accounts").mapValues { count in
            guard let count = count.intValue else { throw TourValueReader.mismatch("a count", count, path: [MemberKey("accounts")]) }
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
    public var tourValue: TourValue { ["step": .string(step), "index": .int(index), "accounts": .int(accounts)] }

    public init(tourValue: TourValue) throws {
        let wire = try TourValueReader(tourValue, as: "report step")
        self.init(step: try wire.string("step"), index: try wire.int("index"), accounts: try wire.int("accounts"))
    }
}
