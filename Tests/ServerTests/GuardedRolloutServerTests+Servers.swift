import AccountSync
import CatalogDocuments
import Foundation
import OnboardingServer
import ServerControlPlane
import ServerTokens
import Testing
import TourCodec
import TourCore
import TourFixtures

extension GuardedRolloutServerTests {
    /// The plan both tests of two servers publish version 2 with: three stages, each passed by its
    /// first 60 subjects.
    static let twoServerPlan = [
        "--stages", "10,50,100", "--guard", "completion:-5pp", "--stage-time", "0s", "--stage-subjects", "60",
    ]

    /// With two servers on one database only one runs the guard; killed, the other takes over.
    @Test func withTwoServersOnlyOneGuardsAndKillingItHandsTheWorkToTheOther() async throws {
        let first = try ServerProcess(serveOptions: Self.guardOptions)
        let second = try ServerProcess(databaseURL: first.databaseURL, serveOptions: Self.guardOptions)
        let key = try Self.prepare(first)
        #expect(try Self.publishV2(first, key: key, Self.twoServerPlan).status == 0)

        func leaders() throws -> [String] { try Self.guardHolders(first) }
        var holding: [String] = []
        let held = Date().addingTimeInterval(60)
        while Date() < held {
            holding = try leaders()
            if !holding.isEmpty { break }
            usleep(100_000)
        }
        #expect(holding.count == 1, "\(holding)")
        let servers = [first, second]
        let leader = try #require(
            servers.first { server in holding.first?.contains("pid \(server.pid ?? -1))") == true })
        let other = try #require(servers.first { $0 !== leader })

        var population = try Population(other, seed: 12)
        try await population.arrive(candidates: 60, baselines: 60, completion: [1: 0.9, 2: 0.9])
        #expect(try population.untilRollout(leaves: 10) == 50)
        #expect(
            try first.sql("SELECT source FROM audit_log WHERE action = 'rollout.raised'") == [
                "server \(ProcessInfo.processInfo.hostName) (pid \(leader.pid ?? -1))"
            ])

        leader.stop(signal: SIGKILL)
        let handedOver = Date().addingTimeInterval(60)
        while Date() < handedOver {
            holding = try leaders()
            if holding.first?.contains("pid \(other.pid ?? -1))") == true { break }
            usleep(100_000)
        }
        #expect(holding == ["onboarding-server rollout guard (pid \(other.pid ?? -1))"], "\(holding)")
        try await population.arrive(candidates: 60, baselines: 60, completion: [1: 0.9, 2: 0.9])
        #expect(try population.untilRollout(leaves: 50) == 100)
        let sources = try first.sql(
            "SELECT source FROM audit_log WHERE action = 'rollout.raised' ORDER BY id")
        #expect(
            sources.last == "server \(ProcessInfo.processInfo.hostName) (pid \(other.pid ?? -1))",
            "\(sources)")
    }

    /// A failover: the primary dies and the standby is promoted; the servers follow it, one of
    /// them takes the guard's lock on the new primary, and the rollout goes on from where it was.
    @Test func theGuardSurvivesAFailoverAndGoesOnFromWhereItWas() async throws {
        let cluster = try ReplicaTests.Cluster(synchronous: true)
        let first = try ServerProcess(databaseURL: cluster.bothHosts, serveOptions: Self.guardOptions)
        let second = try ServerProcess(databaseURL: cluster.bothHosts, serveOptions: Self.guardOptions)
        let key = try Self.prepare(first)
        #expect(try Self.publishV2(first, key: key, Self.twoServerPlan).status == 0)
        var population = try Population(first, seed: 14)
        try await population.arrive(candidates: 60, baselines: 60, completion: [1: 0.9, 2: 0.9])
        #expect(try population.untilRollout(leaves: 10) == 50)

        try cluster.killPrimary()
        _ = try cluster.script("promote")
        let until = Date().addingTimeInterval(30)
        while Date() < until, ![first, second].allSatisfy({ $0.logText.contains("the database moved") }) {
            usleep(100_000)
        }
        // The guard needs one server on the new primary. That every server follows every time is
        // what FailoverTests checks: a server that does not is not held against the guard.
        var following: ServerProcess?
        for _ in 0..<600 where following == nil {
            following = [first, second].first {
                HTTP.status($0.url.appendingPathComponent("v1/health")) == 200
                    && $0.logText.contains("the database moved")
            }
            if following == nil { usleep(100_000) }
        }
        population.server = try #require(following, "no server followed the new primary within a minute")
        #expect(try first.sql("SELECT pg_is_in_recovery()") == ["f"])

        // Exactly one server holds the guard on the new primary, and the rollout goes on.
        var holding: [String] = []
        let heldAgain = Date().addingTimeInterval(60)
        while Date() < heldAgain {
            holding = try Self.guardHolders(first)
            if !holding.isEmpty { break }
            usleep(100_000)
        }
        #expect(holding.count == 1, "\(holding)")
        try await population.arrive(candidates: 60, baselines: 60, completion: [1: 0.9, 2: 0.9])
        #expect(try population.untilRollout(leaves: 50) == 100)
        #expect(try first.sql("SELECT count(*) FROM audit_log WHERE action = 'rollout.raised'") == ["2"])
        for server in [first, second] { #expect(server.exitStatus == nil, "\(server.logText.suffix(2_000))") }
        let followed = [first, second].filter {
            HTTP.status($0.url.appendingPathComponent("v1/health")) == 200
        }.count
        print("guarded rollout across a failover: \(followed) of 2 servers answering on the new primary")
    }

}
