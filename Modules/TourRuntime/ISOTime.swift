/// Times as ISO 8601 in UTC, computed directly: `2026-01-05T09:00:00Z`, or with milliseconds
/// (`...:00.250Z`) when the time has a fraction. The same text as Foundation's
/// `ISO8601DateFormatter` (`TourRuntimeTests.ISOTimeTests` compares them), without loading its
/// calendar machinery (ICU) on a one-shot command's start-up path.
///
/// Every Double has a text: years 0 to 9999 are written with four digits, years outside them with a
/// sign and six digits (ISO 8601's expanded form, `+275760-09-13T00:00:00Z`), and an instant beyond
/// ±8.64e12 s (the range of a JavaScript `Date`) or not finite is written as what it is
/// (`+inf`, `nan`): a stored time that is out of range is shown, never a trap.
public enum ISOTime {
    /// The largest distance from 1970 written as a date: 100,000,000 days.
    public static let limit = 8.64e12

    public static func string(secondsSince1970 seconds: Double) -> String {
        guard seconds.isFinite, abs(seconds) <= limit else {
            return seconds.isNaN ? "nan" : seconds > 0 ? "+inf" : "-inf"
        }
        let wholeSeconds = seconds.rounded(.down)
        var milliseconds = Int(((seconds - wholeSeconds) * 1_000).rounded())
        var total = Int(wholeSeconds)
        if milliseconds == 1_000 {
            milliseconds = 0
            total += 1
        }
        var days = total / 86_400
        var secondOfDay = total % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = civilDate(daysSince1970: days)
        let yearText = (0...9_999).contains(year) ? pad(year, 4) : (year < 0 ? "-" : "+") + pad(abs(year), 6)
        var text = yearText + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
        text += pad(secondOfDay / 3_600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if seconds != wholeSeconds { text += "." + pad(milliseconds, 3) }
        return text + "Z"
    }

    /// The UTC day of an instant, written `YYYY-MM-DD`.
    public static func day(secondsSince1970 seconds: Double) -> String {
        let text = string(secondsSince1970: seconds.rounded(.down))
        return text.firstIndex(of: "T").map { String(text[..<$0]) } ?? text
    }

    /// The UTC year of an instant (out of range: the nearest year in range, 1970 for nan).
    public static func year(secondsSince1970 seconds: Double) -> Int {
        let clamped = seconds.isNaN ? 0 : min(max(seconds, -limit), limit)
        let days = Int((clamped / 86_400).rounded(.down))
        return civilDate(daysSince1970: days).year
    }

    /// A time written `YYYY-MM-DDTHH:MM:SSZ` (UTC), or a day `YYYY-MM-DD` (its start), in seconds
    /// since 1970; nil for anything else.
    public static func secondsSince1970(instant text: String) -> Double? {
        if text.utf8.count == 10 { return secondsSince1970(day: text) }
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            bytes[19] == UInt8(ascii: "Z"), let day = secondsSince1970(day: String(decoding: bytes[0..<10], as: UTF8.self)),
            let hours = Int(String(decoding: bytes[11..<13], as: UTF8.self)), let minutes = Int(String(decoding: bytes[14..<16], as: UTF8.self)),
            let seconds = Int(String(decoding: bytes[17..<19], as: UTF8.self)), (0..<24).contains(hours), (0..<60).contains(minutes),
            (0..<60).contains(seconds)
        else { return nil }
        return day + Double(hours * 3600 + minutes * 60 + seconds)
    }

    /// The start (00:00 UTC) of a day written `YYYY-MM-DD`, in seconds since 1970; nil unless the
    /// text is exactly that and the day exists (`2026-02-30` does not).
    public static func secondsSince1970(day text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        return Double(daysSince1970(year: year, month: month, day: day) * 86_400)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The day count of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count (Howard Hinnant's `civil_from_days`).
    static func civilDate(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
