import Foundation
import Testing
import TourCore

@Suite("Did you mean")
struct NameSuggestionTests {
    @Test func slipsFindTheirName() {
        let actions = ["next", "back", "skip", "chooseApps", "letsGo"]
        #expect(NameSuggestion.nearest(to: "nxet", in: actions) == "next")
        #expect(NameSuggestion.nearest(to: "NEXT", in: actions) == "next")
        #expect(NameSuggestion.nearest(to: "chooseapps", in: actions) == "chooseApps")
        #expect(NameSuggestion.nearest(to: "chooseAps", in: actions) == "chooseApps")
        #expect(NameSuggestion.nearest(to: "previous", in: actions) == "back")
        #expect(NameSuggestion.nearest(to: "continue", in: actions) == "next")
        #expect(NameSuggestion.nearest(to: "mer", in: ["mermaid", "dot"]) == "mermaid")
        #expect(NameSuggestion.nearest(to: "dashbord", in: ["dashboard"]) == "dashboard")
    }

    @Test func farNamesAndExactNamesGetNone() {
        #expect(NameSuggestion.nearest(to: "fly", in: ["next", "back", "skip"]) == nil)
        #expect(NameSuggestion.nearest(to: "next", in: ["next", "back"]) == nil)
        #expect(NameSuggestion.nearest(to: "", in: ["next"]) == nil)
        #expect(NameSuggestion.nearest(to: "previous", in: ["next", "skip"]) == nil)
        // One letter off a two-letter name is not a slip worth naming.
        #expect(NameSuggestion.nearest(to: "zz", in: ["go"]) == nil)
    }

    @Test func editDistanceCountsASwapAsOne() {
        #expect(NameSuggestion.editDistance("next", "nxet") == 1)
        #expect(NameSuggestion.editDistance("kitten", "sitting") == 3)
        #expect(NameSuggestion.editDistance("", "abc") == 3)
    }

    /// The rolling rows give what the whole table gives (optimal string alignment), for random
    /// pairs over a small alphabet where swaps and repeats are common.
    @Test func editDistanceEqualsTheWholeTable() {
        func whole(_ a: [Character], _ b: [Character]) -> Int {
            var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
            for i in 0...a.count { table[i][0] = i }
            for j in 0...b.count { table[0][j] = j }
            for i in stride(from: 1, through: a.count, by: 1) {
                for j in stride(from: 1, through: b.count, by: 1) {
                    var best = min(
                        table[i - 1][j] + 1, table[i][j - 1] + 1,
                        table[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                    if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                        best = min(best, table[i - 2][j - 2] + 1)
                    }
                    table[i][j] = best
                }
            }
            return table[a.count][b.count]
        }
        var random = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "b", "c", "é"]
        for _ in 0..<500 {
            let a = (0..<Int.random(in: 0...7, using: &random)).map { _ in
                alphabet.anyElement(using: &random)
            }
            let b = (0..<Int.random(in: 0...7, using: &random)).map { _ in
                alphabet.anyElement(using: &random)
            }
            #expect(
                NameSuggestion.editDistance(String(a), String(b)) == whole(a, b),
                "\(String(a)) / \(String(b))")
        }
    }

    /// A name far longer than every candidate is near none of them, and is not compared
    /// character by character with each (the refusal of a 100,000-character name stays cheap).
    @Test func anOversizedNameIsNearNothing() {
        let huge = String(repeating: "next", count: 25_000)
        #expect(NameSuggestion.nearest(to: huge, in: ["next", "back", "skip"]) == nil)
        #expect(
            NameSuggestion.nearest(to: "nextt", in: ["next", String(repeating: "x", count: 50_000)]) == "next"
        )
    }

    @Test func everyRefusalCodeIsDistinctAndSnakeCase() {
        let codes = TourRefusal.Code.allCases.map(\.rawValue)
        #expect(Set(codes).count == codes.count)
        #expect(codes.allSatisfy { $0.range(of: "^[a-z_]+$", options: .regularExpression) != nil })
    }
}
