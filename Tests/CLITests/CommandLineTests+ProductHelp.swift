import Foundation
import Testing
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

/// Each product speaks for itself: its own help, `do --help` laid out by entry, and completion
/// scripts that complete its real names.
extension CommandLineTests {
    @Test func helpNamesTheProductsOwnPermissionsSignalsFeaturesAndFlows() throws {
        let finite = try CLI("finite").run("--help").stdout
        #expect(!finite.contains("screenTime"))
        #expect(finite.contains("revealCompleted"))
        #expect(finite.contains("Finite has no features to visit"))
        let lockedin = try CLI("lockedin").run("--help").stdout
        #expect(lockedin.contains("screenTime"))
        let growthSignal = try CLI("growth").run("signal", "--help").stdout
        #expect(!growthSignal.contains("revealCompleted"))
        #expect(growthSignal.contains("Growth reports no signals"))
        let carrierVisit = try CLI("carrierwave").run("visit", "--help").stdout
        #expect(carrierVisit.contains("logbook") || carrierVisit.contains("Features:"))
        let refused = try CLI("finite").run("status", "--permission", "screenTime=granted")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("Finite asks for no permissions"))
        let tutorial = try CLI("moodtracker").run("show")
        #expect(tutorial.stdout.contains("No tutorial is showing"))
    }

    /// The flow noun takes its article ("an onboarding", "a tour"), and `--server` says what syncing
    /// does for the product: account records only where it has flows whose record is the account's.
    @Test func helpReadsRightForEachProduct() throws {
        let lockedin = try CLI("lockedin").run("signal", "--help").stdout
        #expect(lockedin.contains("can start an onboarding."), "\(lockedin)")
        #expect(try CLI("carrierwave").run("signal", "--help").stdout.contains("can start a tour."))
        let flat = { (text: String) in text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        let finite = flat(try CLI("finite").run("--help").stdout)
        #expect(finite.contains("Finite has no flow whose record is the account's"), "\(finite)")
        let growth = flat(try CLI("growth").run("--help").stdout)
        #expect(
            growth.contains("the account's records of app_tour follow the user across devices"), "\(growth)")
    }

    @Test(arguments: products)
    func doHelpNeverWrapsAnEntry(_ product: String) throws {
        let text = try CLI(product).run("do", "--help").stdout
        // The listing: from "Actions of" to the usage line.
        let all = text.split(separator: "\n").map(String.init)
        let start = try #require(all.firstIndex { $0.hasPrefix("Actions of") })
        let end = try #require(all.firstIndex { $0.hasPrefix("USAGE:") })
        let lines = Array(all[start..<end])
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(lines.filter { $0.count > 80 })")
        // Every entry line of the listing ends with ";" (more follows) or its step's last entry, and
        // no line starts with a piece of a parameter.
        for line in lines where line.hasPrefix("      ") {
            let entry = line.trimmingCharacters(in: .whitespaces)
            #expect(entry.first?.isLetter == true || entry.hasPrefix("("), "\(product): \(line)")
        }
    }

    @Test func bashCompletesRealNames() throws {
        let cases: [(String, String, [String], String)] = [
            ("lockedin", "lockedin do ", ["chooseApps", "letsGo", "next"], ""),
            ("growth", "growth visit ", ["dashboard"], ""),
            ("finite", "finite signal ", ["revealCompleted"], ""),
            ("carrierwave", "carrierwave replay ", ["intro"], ""),
            ("finite", "finite reset ", ["walkthrough"], ""),
            ("growth", "growth explain ", ["app_tour"], ""),
            ("growth", "growth graph --flow ", ["app_tour"], ""),
            ("growth", "growth graph --format ", ["mermaid", "dot"], ""),
            ("lockedin", "lockedin --db ", ["completion-probe.sqlite"], ""),
            ("lockedin", "lockedin play ", ["completion-probe.sqlite"], ""),
        ]
        for (product, line, expected, _) in cases {
            let cli = try CLI(product)
            #expect(
                FileManager.default.createFile(
                    atPath: cli.folder.appendingPathComponent("completion-probe.sqlite").path, contents: nil))
            let script = try cli.run("--generate-completion-script", "bash").stdout
            let scriptFile = cli.folder.appendingPathComponent("completion.bash")
            try script.write(to: scriptFile, atomically: true, encoding: .utf8)
            let words = line.split(separator: " ").map(String.init) + (line.hasSuffix(" ") ? [""] : [])
            let quoted = words.map { "'\($0)'" }.joined(separator: " ")
            let probe = """
                cd '\(cli.folder.path)'
                source '\(scriptFile.path)'
                COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMP_LINE='\(line)'; \
                COMP_POINT=\(line.count)
                _\(product) "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            let bash = Process()
            bash.executableURL = URL(fileURLWithPath: "/bin/bash")
            bash.arguments = ["-c", probe]
            var environment = cli.environment
            environment["PATH"] = CLI.binaries.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            bash.environment = environment
            let output = try ChildProcess.spawning {
                let output = Pipe()
                bash.standardOutput = output
                bash.standardError = Pipe()
                try bash.run()
                return output
            }
            let data = output.fileHandleForReading.readUntilEnd()
            bash.waitUntilExit()
            let offered = Set(String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init))
            for word in expected {
                #expect(offered.contains(word), "\(line)<TAB> offers \(offered.sorted()), not \(word)")
            }
        }
    }

    @Test(arguments: ["zsh", "fish"])
    func zshAndFishScriptsCarryTheProductsNames(_ shell: String) throws {
        let script = try CLI("lockedin").run("--generate-completion-script", shell).stdout
        for name in ["chooseApps", "letsGo", "onboarding", "mermaid"] {
            #expect(script.contains(name), "\(shell) script lacks \(name)")
        }
    }
}
