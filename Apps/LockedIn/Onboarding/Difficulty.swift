import TourCore

/// LockedIn's four difficulty levels. The seed names the card's parts (rank bars, name, ratio, max
/// bank, tagline) but not their values: these are our decision, documented in Docs/LockedIn.md.
public struct Difficulty: Sendable, Equatable {
    public var id: String
    public var name: String
    /// How many of the four rank bars are filled.
    public var rank: Int
    /// Workout minutes : screen-time minutes earned.
    public var ratio: String
    public var maxBankMinutes: Int
    public var tagline: String

    public static let all = [
        Difficulty(
            id: "easy", name: "EASY", rank: 1, ratio: "1:2", maxBankMinutes: 240, tagline: "Ease into it."),
        Difficulty(
            id: "medium", name: "MEDIUM", rank: 2, ratio: "1:1", maxBankMinutes: 120,
            tagline: "Earn what you use."),
        Difficulty(
            id: "hard", name: "HARD", rank: 3, ratio: "2:1", maxBankMinutes: 60,
            tagline: "Every minute costs sweat."),
        Difficulty(
            id: "extreme", name: "EXTREME", rank: 4, ratio: "3:1", maxBankMinutes: 30,
            tagline: "No excuses. Fully locked in."),
    ]

    public static let preselected = "medium"

    /// The card as one line: `▮▮▯▯ MEDIUM · 1:1 · max bank 120 min · Earn what you use.`
    public var cardLine: String {
        String(repeating: "▮", count: rank) + String(repeating: "▯", count: 4 - rank)
            + " \(name) · \(ratio) · max bank \(maxBankMinutes) min · \(tagline)"
    }
}
