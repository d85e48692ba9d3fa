import Foundation
import TestThreads
import Testing

/// Growth's tour "once per user account", across two devices of one account, with the real
/// `growth` executable on two database files and the real server over PostgreSQL.
@Suite("Growth across devices (the seed's multi-device scenarios)", .ownThread)
struct GrowthAcrossDevicesTests {
    /// Device B does not show the tour after device A skipped it, without running `launch` first.
    @Test func aTourSkippedOnOneDeviceDoesNotShowOnAnotherWithoutALaunch() async throws {
        let server = try ServerProcess()
        let phone = try Device("growth", account: "ann", server: server)
        let tablet = try Device("growth", account: "ann", server: server)
        try phone.run("do", "completeOnboarding")
        #expect(try phone.run("visit", "dashboard").stdout.contains("Step 1 of 5"))
        #expect(try phone.run("do", "skip").status == 0)
        #expect(try phone.waiting() == 0)

        try tablet.run("do", "completeOnboarding")
        let visit = try tablet.run("visit", "dashboard")
        #expect(visit.status == 0)
        #expect(
            !visit.stdout.contains("Step 1 of 5"),
            "growth app_tour dashboard showed on device B: \(visit.stdout)")
        #expect(try tablet.flowStatus("app_tour") == "skipped")
    }

    /// "Shown" is recorded while the tour is in progress: the account's record says so at once.
    @Test func aTourInProgressIsRecordedAsShownForTheAccount() async throws {
        let server = try ServerProcess()
        let phone = try Device("growth", account: "ann", server: server)
        try phone.run("do", "completeOnboarding")
        try phone.run("visit", "dashboard")
        try phone.run("do", "next")
        let answer = try await HTTP.get(
            server.url.appendingPathComponent("v1/apps/growth/accounts/ann/flows"), token: phone.token)
        let flows = answer.json["flows"] as? [String: Any]
        let tour = flows?["app_tour"] as? [String: Any]
        #expect(tour?["standing"] as? String == "shown")
    }

    /// Device B, offline, starts the tour; A completes it; back online B ends its tour (a journal
    /// fact) instead of going on at Step 2, and B's skip cannot overwrite A's completion.
    @Test func anOfflineDeviceThatComesBackEndsATourTheAccountCompleted() async throws {
        let server = try ServerProcess()
        let phone = try Device("growth", account: "ann", server: server)
        let tablet = try Device("growth", account: "ann", server: server)
        try tablet.run("do", "completeOnboarding", offline: true)
        try tablet.run("visit", "dashboard", offline: true)
        #expect(try tablet.run("do", "next", offline: true).stdout.contains("Step 2 of 5"))
        #expect(try tablet.waiting() == 3)

        try phone.run("do", "completeOnboarding")
        try phone.run("visit", "dashboard")
        for _ in 0..<5 { try phone.run("do", "next") }
        #expect(try phone.flowStatus("app_tour") == "completed")

        let show = try tablet.run("show")
        #expect(!show.stdout.contains("Step 2 of 5"), "growth app_tour logSession still shows on device B")
        let skip = try tablet.run("do", "skip")
        #expect(skip.status == 1)
        #expect(try tablet.flowStatus("app_tour") == "completed")
        let journal = try tablet.run("journal", "--json").stdout
        #expect(journal.contains("finishedElsewhere"))

        // Even a skip that happened offline, before the completion was known, loses to it.
        let other = try Device("growth", account: "ann", server: server)
        try other.run("do", "completeOnboarding", offline: true)
        try other.run("visit", "dashboard", offline: true)
        try other.run("do", "skip", offline: true)
        #expect(try other.flowStatus("app_tour", offline: true) == "skipped")
        #expect(try other.run("sync").status == 0)
        #expect(try other.flowStatus("app_tour") == "completed")
        let flows =
            try await HTTP.get(
                server.url.appendingPathComponent("v1/apps/growth/accounts/ann/flows"), token: other.token
            ).json["flows"] as? [String: Any]
        #expect((flows?["app_tour"] as? [String: Any])?["standing"] as? String == "completed")
    }

    /// A reset on one device (the seed's development reset) shows the tour again on the others.
    @Test func aResetOnOneDeviceStartsANewEpochForTheAccount() async throws {
        let server = try ServerProcess()
        let phone = try Device("growth", account: "ann", server: server)
        let tablet = try Device("growth", account: "ann", server: server)
        try phone.run("do", "completeOnboarding")
        try phone.run("visit", "dashboard")
        try phone.run("do", "skip")
        try tablet.run("do", "completeOnboarding")
        #expect(try tablet.flowStatus("app_tour") == "skipped")
        try phone.run("reset")
        #expect(try tablet.run("visit", "dashboard").stdout.contains("Step 1 of 5"))
    }
}
