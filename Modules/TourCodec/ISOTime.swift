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
        let (year, month, day) = CivilDate.date(daysSince1970: days)
        let yearText = (0...9_999).contains(year) ? pad(year, 4) : (year < 0 ? "-" : "+") + pad(abs(year), 6)
        var text = yearText + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
        text +=
            pad(secondOfDay / 3_600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if seconds != wholeSeconds { text += "." + pad(milliseconds, 3) }
        return text + "Z"
    }

    /// An instant to the second, the fraction dropped (`2026-01-05T09:00:00Z`): what the audit
    /// trail, the command lines' lists and the dashboard's times show.
    public static func wholeSeconds(_ seconds: Double) -> String {
        // As Foundation's formatter: the time to the millisecond, then its fraction left out.
        let text = string(secondsSince1970: seconds)
        guard let dot = text.lastIndex(of: ".") else { return text }
        return text[..<dot] + "Z"
    }

    /// An instant to the minute, as people read it beside a "UTC" (`2026-01-05 09:00`): the studio's
    /// revisions and drafts.
    public static func minutes(_ seconds: Double) -> String {
        let text = wholeSeconds(seconds)
        guard text.count >= 20, let t = text.firstIndex(of: "T") else { return text }
        let time = text[text.index(after: t)...]
        return text[..<t] + " " + time.prefix(5)
    }

    /// An instant to the millisecond, always with three digits (`2026-01-05T09:00:00.000Z`): a
    /// subject's timeline, whose facts often come several a second.
    public static func milliseconds(_ seconds: Double) -> String {
        let text = string(secondsSince1970: seconds)
        guard text.hasSuffix("Z"), !text.contains(".") else { return text }
        return text.dropLast() + ".000Z"
    }

    /// The UTC day of an instant, written `YYYY-MM-DD`.
    public static func day(secondsSince1970 seconds: Double) -> String {
        let whole = seconds.rounded(.down)
        guard whole.isFinite, abs(whole) <= limit else { return string(secondsSince1970: whole) }
        // The day of `string`'s text, written directly (a product's context asks for it every event).
        let total = Int(whole)
        let days = total / 86_400 - (total % 86_400 < 0 ? 1 : 0)
        let (year, month, day) = CivilDate.date(daysSince1970: days)
        guard (0...9_999).contains(year) else {
            return (year < 0 ? "-" : "+") + pad(abs(year), 6) + "-" + pad(month, 2) + "-" + pad(day, 2)
        }
        return String(unsafeUninitializedCapacity: 10) { text in
            func put(_ value: Int, width: Int, at start: Int) {
                var value = value
                for index in stride(from: start + width - 1, through: start, by: -1) {
                    text[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(year, width: 4, at: 0)
            text[4] = UInt8(ascii: "-")
            put(month, width: 2, at: 5)
            text[7] = UInt8(ascii: "-")
            put(day, width: 2, at: 8)
            return 10
        }
    }

    /// The UTC year of an instant (out of range: the nearest year in range, 1970 for nan).
    public static func year(secondsSince1970 seconds: Double) -> Int {
        let clamped = seconds.isNaN ? 0 : min(max(seconds, -limit), limit)
        let days = Int((clamped / 86_400).rounded(.down))
        return CivilDate.date(daysSince1970: days).year
    }

    /// A time written `YYYY-MM-DDTHH:MM:SSZ` (UTC), or a day `YYYY-MM-DD` (its start), in seconds
    /// since 1970; nil for anything else.
    public static func secondsSince1970(instant text: String) -> Double? {
        if text.utf8.count == 10 { return secondsSince1970(day: text) }
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
            bytes[16] == UInt8(ascii: ":"),
            bytes[19] == UInt8(ascii: "Z"),
            let day = secondsSince1970(day: String(decoding: bytes[0..<10], as: UTF8.self)),
            let hours = Int(String(decoding: bytes[11..<13], as: UTF8.self)),
            let minutes = Int(String(decoding: bytes[14..<16], as: UTF8.self)),
            let seconds = Int(String(decoding: bytes[17..<19], as: UTF8.self)), (0..<24).contains(hours),
            (0..<60).contains(minutes),
            (0..<60).contains(seconds)
        else { return nil }
        return day + Double(hours * 3600 + minutes * 60 + seconds)
    }

    /// The start (00:00 UTC) of a day written `YYYY-MM-DD`, in seconds since 1970; nil unless the
    /// text is exactly that and the day exists (`2026-02-30` does not).
    public static func secondsSince1970(day text: String) -> Double? {
        CivilDate.daysSince1970(text).map { Double($0 * 86_400) }
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
