import Foundation
import InsightsPages
import OnboardingServer
import Testing
import TourCodec
import TourCore
import TourFixtures

extension JourneyDashboardTests {
    /// Does the card's first action that is neither skip nor back, as a user moving on would (each
    /// of Finite's cards asks for its own). False when no card shows, or the action needs what a
    /// script does not give (Finite's phase form): the user stops there.
    static func advance(_ device: Device) throws -> Bool {
        let shown = try device.run("show", "--json")
        let object = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
        guard let actions = (object?["card"] as? [String: Any])?["actions"] as? [String],
            let action = actions.first(where: { $0 != "skip" && $0 != "back" })
        else { return false }
        return try device.run("do", action).status == 0
    }

    /// Registers every recorded release of a product, oldest first, as its releases did.
    static func registerReleases(_ app: String, folder: String, on server: ServerProcess) throws {
        let releases = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Apps/\(folder)/Onboarding/releases")
        let files = try FileManager.default.contentsOfDirectory(atPath: releases.path).filter {
            $0.hasSuffix(".json")
        }
        .sorted { (Int($0.dropLast(5)) ?? 0) < (Int($1.dropLast(5)) ?? 0) }
        for file in files {
            let registered = try server.command([
                "register", "--app", app, releases.appendingPathComponent(file).path,
            ])
            try #require(registered.status == 0, "\(app) \(file): \(registered.stderr)")
        }
    }

    static func virtual(_ device: Device, kind: String) -> Device {
        var device = device
        device.environment = ["ONBOARDING_CLOCK": "virtual", "ONBOARDING_DEVICE_KIND": kind]
        return device
    }

    /// Signs the browser in with `credential`, typed into the form as a person would.
    static func signIn(_ browser: Browser, _ server: ServerProcess, _ credential: String) throws {
        try browser.open(server.url.appendingPathComponent("dashboard/sign-in"))
        _ = try browser.evaluate("document.querySelector('input[name=credential]').focus()")
        try browser.type(credential)
        try browser.leave { try browser.press("Enter", code: 13) }
    }

    /// The funnel table of the open page: label → reached, skipped, abandoned, median and p75 (ms),
    /// from-first and from-previous as shown.
    static func funnelRows(_ browser: Browser) throws -> [[String]] {
        try #require(
            try browser.evaluate(
                """
                [...document.querySelectorAll('table[data-chart=funnel] tbody tr')].map(r => \
                [r.querySelector('th').textContent,
                  ...['reached', 'skipped', 'abandoned', 'fromFirst', 'fromPrevious'].map(f => \
                r.querySelector('[data-field=' + f + ']').textContent),
                  ...['median', 'p75'].map(f => r.querySelector('[data-field=' + f + ']').dataset.ms)])
                """) as? [[String]])
    }
}
