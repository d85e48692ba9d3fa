/// Times as ISO 8601 in UTC, computed directly: `2026-01-05T09:00:00Z`, or with milliseconds
/// (`...:00.250Z`) when the time has a fraction. The same text as Foundation's
/// `ISO8601DateFormatter` (`TourRuntimeTests.ISOTimeTests` compares them), without loading its
/// calendar machinery (ICU) on a one-shot command's start-up path.
public enum ISOTime {
    public static func string(secondsSince1970 seconds: Double) -> String {
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
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
        text += pad(secondOfDay / 3_600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if seconds != wholeSeconds { text += "." + pad(milliseconds, 3) }
        return text + "Z"
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
