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

    @Test func everyRefusalCodeIsDistinctAndSnakeCase() {
        let codes = TourRefusal.Code.allCases.map(\.rawValue)
        #expect(Set(codes).count == codes.count)
        #expect(codes.allSatisfy { $0.range(of: "^[a-z_]+$", options: .regularExpression) != nil })
    }
}
