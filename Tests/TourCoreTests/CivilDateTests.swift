import Foundation
import Testing
import TourCodec

/// The one calendar of the journal, the date fields and the server's day ranges, against
/// Foundation's Gregorian calendar in UTC.
@Suite("The civil calendar")
struct CivilDateTests {
    static let gregorian: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        return calendar
    }()

    /// Every 97th day from 1600 to 2400 (leap centuries and their neighbours included): the date
    /// Foundation gives, and back to the same count.
    @Test func dayCountsAndDatesAgreeWithFoundation() throws {
        for days in stride(from: -135_000, through: 157_000, by: 97) {
            let date = CivilDate.date(daysSince1970: days)
            let parts = Self.gregorian.dateComponents(
                [.year, .month, .day], from: Date(timeIntervalSince1970: Double(days) * 86_400))
            #expect(
                date.year == parts.year && date.month == parts.month && date.day == parts.day, "day \(days)")
            #expect(CivilDate.daysSince1970(year: date.year, month: date.month, day: date.day) == days)
            #expect(CivilDate.daysSince1970(CivilDate.text(daysSince1970: days)) == days)
        }
    }

    @Test func leapYearsAsTheGregorianCalendarHasThem() {
        #expect(CivilDate.days(inMonth: 2, of: 2000) == 29)
        #expect(CivilDate.days(inMonth: 2, of: 1900) == 28)
        #expect(CivilDate.days(inMonth: 2, of: 2024) == 29)
        #expect(CivilDate.days(inMonth: 2, of: 2026) == 28)
        #expect(CivilDate.days(inMonth: 4, of: 2026) == 30)
        #expect(CivilDate.parse("2024-02-29")! == (2024, 2, 29))
    }

    /// Only `YYYY-MM-DD` in ASCII digits, of a day that exists.
    @Test(arguments: [
        "2026-02-30", "2026-13-01", "2026-00-10", "2026-01-00", "2026-+1-01", "+026-01-01", "2026-1-01",
        "2026-01-1", "2026/01/01", "２０２６-01-01", "2026-01-01T00:00:00Z", "", "1900-02-29",
    ])
    func anythingElseIsRefused(_ text: String) {
        #expect(CivilDate.parse(text) == nil)
        #expect(CivilDate.daysSince1970(text) == nil)
    }
}
