import AccountSync
import ArgumentParser
import Foundation
import OnboardingServer
import ServerPublishing
import TourCodec
import TourCore

/// `rollout`: the guarded rollouts of an app (`publish --stages … --guard …`): where each is,
/// the guardrail's interval at every look, and a person's pause, resume and end.
struct RolloutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollout",
        abstract: "Follow and steer guarded rollouts (published with --stages and --guard).",
        subcommands: [Show.self, Steer.Pause.self, Steer.Resume.self, Steer.End.self])

    /// `rollout show --app A`: each guarded rollout, its stage and the guard's looks.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                """
                Show an app's guarded rollouts: stage, status, the guardrail's interval at each look and \
                what comes next.
                """
        )

        @Option(help: "The app.") var app: String
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var target: CatalogTarget

        func run() async throws {
            guard SyncAPI.isValidName(app) else {
                throw ValidationError("the app must be \(SyncAPI.nameRule)")
            }
            let app = app
            let rollouts: TourValue
            if let api = try target.api() {
                rollouts = try await target.send(.GET, "/v1/apps/\(app)/rollouts", body: nil, to: api)
            } else {
                rollouts = try await target.database.withClient { client, logger in
                    let store = GuardedRollouts(client: client, logger: logger)
                    var list: [TourValue] = []
                    for record in try await store.all(app: app) {
                        var object = record.tourValue.objectValue ?? [:]
                        object["looks"] = .list(
                            try await store.looks(app: app, version: record.version).map(\.tourValue))
                        list.append(.object(object))
                    }
                    return ["app": .string(app), "rollouts": .list(list)] as TourValue
                }
            }
            if json {
                print(try rollouts.jsonText())
                return
            }
            let list = rollouts.objectValue?["rollouts"]?.listValue ?? []
            if list.isEmpty {
                print("\(app) has no guarded rollout (publish --stages 5,25,50,100 --guard completion:-2pp)")
            }
            for rollout in list { print(Self.text(rollout)) }
        }

        static func number(_ value: TourValue) -> Double? {
            switch value {
            case .double(let number): number
            case .int(let number): Double(number)
            default: nil
            }
        }

        static func text(_ rollout: TourValue) -> String {
            let object = rollout.objectValue ?? [:]
            let stages = object["stages"]?.listValue?.compactMap(\.intValue) ?? []
            var lines = [
                "version \(object["version"]?.intValue ?? 0) against \(object["baseline"]?.intValue ?? 0): "
                    + "\(object["status"]?.stringValue ?? "?") at \(object["rollout"]?.intValue ?? 0)% "
                        + """
                        (stage \(object["stage"]?.intValue ?? 0) of \(stages.count): \
                        \(stages.map { "\($0)%" }.joined(separator: ", "))), 
                        """
                    + "guard \(object["guard"]?.stringValue ?? "?") on \(object["flow"]?.stringValue ?? "?")"
            ]
            for look in object["looks"]?.listValue ?? [] {
                let look = look.objectValue ?? [:]
                let candidate = look["candidate"]?.objectValue ?? [:]
                let baseline = look["baseline"]?.objectValue ?? [:]
                let interval = look["interval"]?.listValue?.compactMap(Self.number) ?? []
                let at = ISOTime.wholeSeconds(look["at"].flatMap(Self.number) ?? 0)
                lines.append(
                    "  \(at) at \(look["rollout"]?.intValue ?? 0)%: "
                        + """
                        \(candidate["reached"]?.intValue ?? 0)/\(candidate["subjects"]?.intValue ?? 0) \
                        against 
                        """
                            + """
                            \(baseline["reached"]?.intValue ?? 0)/\(baseline["subjects"]?.intValue ?? 0), \
                            difference 
                            """
                        + (interval.count == 2
                            ? """
                            \(GuardedRollout.Guardrail.points(interval[0])) to \
                            \(GuardedRollout.Guardrail.points(interval[1]))
                            """
                            : "not known yet")
                        + "; \(look["decision"]?.stringValue ?? "")")
            }
            return lines.joined(separator: "\n")
        }
    }

    /// A person's command: the same for pause, resume and end.
    struct Steer: ParsableArguments {
        @Option(help: "The app.") var app: String
        @Option(help: "The guarded publication's version.") var version: Int
        @OptionGroup var target: CatalogTarget

        func run(_ command: GuardedRollout.Command) async throws {
            guard SyncAPI.isValidName(app) else {
                throw ValidationError("the app must be \(SyncAPI.nameRule)")
            }
            let (app, version) = (app, version)
            if let api = try target.api() {
                let answer = try await target.send(
                    .POST, "/v1/apps/\(app)/rollouts/\(version)/\(command.rawValue)", body: nil, to: api)
                let rollout = answer.objectValue?["rollout"]?.objectValue ?? [:]
                print(
                    Self.done(
                        app, version, rollout["status"]?.stringValue ?? "?", rollout["rollout"]?.intValue ?? 0
                    ))
                return
            }
            let outcome = try await target.database.withClient { client, logger in
                try await GuardedRollouts(client: client, logger: logger).command(
                    command, app: app, version: version, by: .commandLine(), at: Date().timeIntervalSince1970)
            }
            switch outcome {
            case .applied(let record):
                print(Self.done(app, version, record.value.status.rawValue, record.value.percent))
            case .missing: throw Refusal("\(app) has no guarded rollout of version \(version)")
            case .refused(let message): throw Refusal(message)
            }
        }

        static func done(_ app: String, _ version: Int, _ status: String, _ percent: Int) -> String {
            "\(app) version \(version): the guarded rollout is \(status), at \(percent)%"
        }

        struct Pause: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Stop the rollout guard acting on a guarded rollout; it stays at its percentage.")
            @OptionGroup var steer: Steer
            func run() async throws { try await steer.run(.pause) }
        }

        struct Resume: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract:
                    """
                    Let the rollout guard act on a paused guarded rollout again (the stage's clock starts \
                    again).
                    """
            )
            @OptionGroup var steer: Steer
            func run() async throws { try await steer.run(.resume) }
        }

        struct End: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract:
                    """
                    End a guarded rollout: it stays at its percentage, raised or withdrawn by hand from now \
                    on.
                    """
            )
            @OptionGroup var steer: Steer
            func run() async throws { try await steer.run(.end) }
        }
    }
}
