import Foundation
import TestThreads
import Testing
import TourFixtures

/// What a journal row was recorded with goes with it, whenever it is pushed: the analytics
/// consent of the moment (a row written with analytics off never sends its facts), and the locale
/// and device kind a flow started in (a run started offline is counted where it happened).
@Suite("Consent and context at the moment of the event", .ownThread)
struct ConsentAndContextTests {
    /// Rows written offline with analytics off, synced later with analytics on: none of their
    /// facts reach the server. Rows written with it on, synced after it was turned off: none
    /// either (consent withdrawn). Rows written and synced with it on: their facts go.
    @Test func factsRecordedWithoutConsentNeverLeaveTheDevice() async throws {
        let server = try ServerProcess()
        try server.acceptEnrollments(of: "finite")
        var device = try Device(asInstall: "finite", server: server)
        device.environment = ["ONBOARDING_CLOCK": "virtual"]
        #expect(try device.run("launch", "--analytics", "off", offline: true).status == 0)
        #expect(try device.run("wait", "1.5", offline: true).status == 0)
        #expect(try device.run("do", "next", offline: true).status == 0)
        #expect(try device.run("sync", "--analytics", "on").status == 0)
        let offRows = try server.sql("SELECT count(*), max(seq) FROM pushes WHERE app = 'finite'").first ?? ""
        #expect(
            offRows.hasPrefix("0|") == false,
            "the rows themselves are pushed (their order, records): \(offRows)")
        #expect(try server.sql("SELECT count(*) FROM facts WHERE app = 'finite'") == ["0"])

        // Written with analytics on, then consent withdrawn before the sync: not sent.
        #expect(try device.run("do", "tapCurrentWeek", offline: true).status == 0)
        #expect(try device.run("sync", "--analytics", "off").status == 0)
        #expect(try server.sql("SELECT count(*) FROM facts WHERE app = 'finite'") == ["0"])

        // Written and synced with it on: sent, and only those rows' facts.
        let lastWithout =
            Int(try server.sql("SELECT max(seq) FROM pushes WHERE app = 'finite'").first ?? "") ?? -1
        #expect(try device.run("do", "swipeToChapters", "--analytics", "on").status == 0)
        #expect(try device.run("sync").status == 0)
        #expect(try server.sql("SELECT count(*) > 0 FROM facts WHERE app = 'finite'") == ["t"])
        #expect(
            try server.sql("SELECT count(*) FROM facts WHERE app = 'finite' AND seq <= \(lastWithout)") == [
                "0"
            ])
    }

    /// A Mood Tracker run started offline on a pt-BR tablet and synced later from the same file as
    /// `--locale en` on a phone: its start is counted in pt-BR on a tablet. The file remembers
    /// `--locale`: a later command without it shows pt-BR's texts.
    @Test func aRunStartedOfflineIsCountedWhereItStarted() async throws {
        let server = try ServerProcess()
        try server.acceptEnrollments(of: "moodtracker")
        var tablet = try Device(asInstall: "moodtracker", server: server)
        tablet.environment = ["ONBOARDING_DEVICE_KIND": "tablet", "ONBOARDING_CLOCK": "virtual"]
        #expect(try tablet.run("launch", "--locale", "pt-BR", offline: true).status == 0)
        #expect(try tablet.run("wait", "0.5", offline: true).status == 0)
        let remembered = try tablet.run("show", offline: true)
        #expect(remembered.status == 0)
        let inEnglish = try tablet.run("show", "--locale", "en", offline: true)
        #expect(
            remembered.stdout != inEnglish.stdout,
            "the same texts in pt-BR (remembered) and en: \(remembered.stdout)")

        var phone = tablet
        phone.environment = ["ONBOARDING_DEVICE_KIND": "phone", "ONBOARDING_CLOCK": "virtual"]
        #expect(try phone.run("sync", "--locale", "en").status == 0)
        let started = try server.sql(
            """
            SELECT body->'context'->>'locale' || ' ' || (body->'context'->>'device') FROM facts WHERE \
            app = 'moodtracker' AND kind = 'flowStarted'
            """
        )
        #expect(started == ["pt-BR tablet"], "\(started)")
        // The remembered locale is now en, as asked last.
        #expect(try phone.run("show", offline: true).stdout == inEnglish.stdout)
    }
}
