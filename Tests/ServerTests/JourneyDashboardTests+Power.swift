import Foundation
import InsightsPages
import OnboardingServer
import Testing
import TourCodec
import TourCore
import TourFixtures

extension JourneyDashboardTests {
    /// The smallest n whose power to tell `baseline` from `baseline + effect` (two-sided 5%) is at
    /// least 80%, found by evaluating the normal power function (an independent route to the
    /// closed form the page uses).
    static func powerSearch(baseline p1: Double, effect: Double) -> Int {
        let p2 = p1 + effect
        let mean = (p1 + p2) / 2
        func phi(_ x: Double) -> Double { 0.5 * erfc(-x / 2.0.squareRoot()) }
        var n = 1
        while true {
            let z =
                (abs(effect) * Double(n).squareRoot() - 1.959_963_984_540_054
                    * (2 * mean * (1 - mean)).squareRoot())
                / (p1 * (1 - p1) + p2 * (1 - p2)).squareRoot()
            if phi(z) >= 0.8 { return n }
            n += 1
        }
    }
}

/// The page's percent text (one decimal, half away from zero), as the test expects it written.
enum InsightsPageText {
    static func percent(_ value: Double) -> String {
        let tenths = Int((value * 1000).rounded())
        return "\(tenths / 10).\(tenths % 10)%"
    }
}
