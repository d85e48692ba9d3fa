import Foundation
import Testing
import TourCodec

/// `ISOTime` writes what Foundation's `ISO8601DateFormatter` writes, for whole and fractional
/// times across eras, leap days and the epoch.
@Suite struct ISOTimeTests {
    let formatter = ISO8601DateFormatter()
    let fractional: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()

    func foundation(_ seconds: Double) -> String {
        let date = Date(timeIntervalSince1970: seconds)
        return seconds == seconds.rounded(.down)
            ? formatter.string(from: date) : fractional.string(from: date)
    }

    @Test(arguments: [
        0, 1, -1, 59.5, 0.2379, 59.9996, 7.0004, -0.25, 86_399.999, 951_782_400, 951_868_799.25,
        1_767_603_600, 1_795_437_642.9523697, 4_102_444_800,
        -2_208_988_800, 253_402_300_799,
    ])
    func knownTimes(_ seconds: Double) {
        #expect(ISOTime.string(secondsSince1970: seconds) == foundation(seconds))
    }

    /// The studio's minutes are the calendar's: year, month, day, hour and minute in UTC, as the
    /// `Calendar` the studio used wrote them.
    @Test func minutesAreTheUTCCalendarsToTheMinute() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var generator = SystemRandomNumberGenerator()
        for seconds in [0, 1_767_225_600, 951_868_799]
            + (0..<2_000).map({ _ in
                Double(Int.random(in: 0...4_102_444_800, using: &generator))
            })
        {
            let parts = calendar.dateComponents(
                [.year, .month, .day, .hour, .minute], from: Date(timeIntervalSince1970: seconds))
            let expected = [parts.year, parts.month, parts.day, parts.hour, parts.minute].map { $0 ?? -1 }
            let text = ISOTime.minutes(seconds)
            let fields = text.split(whereSeparator: { "- :".contains($0) }).map { Int($0) ?? -2 }
            #expect(fields == expected && text.count == 16, "\(seconds): \(text)")
        }
        #expect(ISOTime.minutes(1_767_225_600) == "2026-01-01 00:00")
    }

    /// The two forms the server and its command line show, as Foundation's formatters write them:
    /// to the second (`ISO8601DateFormatter`, which they replace) and to the millisecond, rounded
    /// (its fractional form; `ISO8601FormatStyle`, which the timeline used, truncated the double,
    /// so 0.045 s read .044).
    @Test func wholeSecondsAndMillisecondsAreWhatFoundationsFormattersWrote() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let seconds = Double.random(in: 0...4_102_444_800, using: &generator)
            #expect(
                ISOTime.wholeSeconds(seconds) == formatter.string(from: Date(timeIntervalSince1970: seconds)),
                "\(seconds)")
            let whole = (seconds * 1_000).rounded(.down) / 1_000
            #expect(
                ISOTime.milliseconds(whole) == fractional.string(from: Date(timeIntervalSince1970: whole)),
                "\(whole)")
        }
        #expect(ISOTime.milliseconds(0) == "1970-01-01T00:00:00.000Z")
        #expect(ISOTime.wholeSeconds(59.999) == "1970-01-01T00:00:59Z")
        #expect(ISOTime.wholeSeconds(59.9996) == "1970-01-01T00:01:00Z")
    }

    @Test func randomTimes() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let whole = Double(Int.random(in: -2_000_000_000...4_000_000_000, using: &generator))
            let seconds =
                Bool.random(using: &generator)
                ? whole : whole + Double(Int.random(in: 1...999, using: &generator)) / 1_000
            #expect(ISOTime.string(secondsSince1970: seconds) == foundation(seconds), "\(seconds)")
        }
    }

    /// Days and years as Foundation's UTC Gregorian calendar gives them, and `YYYY-MM-DD` read back
    /// only when the day exists.
    @Test func daysAndYearsAgreeWithTheCalendar() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let seconds = Double(Int.random(in: -2_000_000_000...4_000_000_000, using: &generator))
            let date = Date(timeIntervalSince1970: seconds)
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            let text = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
            #expect(ISOTime.day(secondsSince1970: seconds) == text, "\(seconds)")
            #expect(ISOTime.year(secondsSince1970: seconds) == parts.year, "\(seconds)")
            let start = calendar.date(
                from: DateComponents(year: parts.year, month: parts.month, day: parts.day))!
            #expect(ISOTime.secondsSince1970(day: text) == start.timeIntervalSince1970, "\(text)")
        }
        for impossible in [
            "2026-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "2026-1-01", "26-01-01", "2026-01-01T",
        ] {
            #expect(ISOTime.secondsSince1970(day: impossible) == nil, "\(impossible)")
        }
        #expect(ISOTime.secondsSince1970(day: "2024-02-29") != nil)
    }

    /// Any Double has a text and a year, none traps: out of range times are written as ISO 8601's
    /// expanded years up to ±8.64e12 s (100,000,000 days), and as what they are beyond it.
    @Test func everyDoubleHasATextWithoutTrapping() {
        #expect(ISOTime.string(secondsSince1970: 8.64e12) == "+275760-09-13T00:00:00Z")
        #expect(ISOTime.string(secondsSince1970: -8.64e12) == "-271821-04-20T00:00:00Z")
        #expect(ISOTime.string(secondsSince1970: 253_402_300_800) == "+010000-01-01T00:00:00Z")
        #expect(ISOTime.string(secondsSince1970: 1e300) == "+inf")
        #expect(ISOTime.string(secondsSince1970: -.greatestFiniteMagnitude) == "-inf")
        #expect(ISOTime.string(secondsSince1970: .infinity) == "+inf")
        #expect(ISOTime.string(secondsSince1970: .nan) == "nan")
        #expect(ISOTime.day(secondsSince1970: 1e300) == "+inf")
        #expect(ISOTime.day(secondsSince1970: 8.64e12) == "+275760-09-13")
        #expect(ISOTime.year(secondsSince1970: .infinity) == 275_760)
        #expect(ISOTime.year(secondsSince1970: .nan) == 1970)
    }

    /// `day` writes its text directly: the same as the day of `string`'s text, for any Double
    /// (fractions, before 1970, expanded years, the limits, and beyond them).
    @Test func aDayIsTheDayOfTheTimesText() {
        var generator = SystemRandomNumberGenerator()
        var samples: [Double] = [
            0, -0.0, -0.5, 0.5, 86_399.999, 86_400, -86_400, -86_400.5, 253_402_300_799.9, 253_402_300_800,
            -62_167_219_200, -62_167_219_200.5, ISOTime.limit, -ISOTime.limit, ISOTime.limit + 1, .infinity,
            .nan,
        ]
        for _ in 0..<5_000 {
            samples.append(Double.random(in: -ISOTime.limit...ISOTime.limit, using: &generator))
        }
        for _ in 0..<5_000 { samples.append(Double.random(in: -3e9...3e9, using: &generator)) }
        for seconds in samples {
            let text = ISOTime.string(secondsSince1970: seconds.rounded(.down))
            let expected = text.firstIndex(of: "T").map { String(text[..<$0]) } ?? text
            #expect(ISOTime.day(secondsSince1970: seconds) == expected, "\(seconds)")
        }
    }
}
