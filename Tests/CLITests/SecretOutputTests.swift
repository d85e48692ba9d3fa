import Foundation
import TestThreads
import Testing
import TourFixtures

/// Carrier Wave's QRZ password never reaches any output: every path that quotes input back is
/// driven with it, in text and JSON, through the built executable.
@Suite("No secret in any output", .ownThread)
struct SecretOutputTests {
    /// Both ends of the password are markers: a partial leak of either end is caught too.
    let password = "Q7pw-\(UUID().uuidString.prefix(8))\"'\\=Q8"

    /// Lines as a script would hold them, the password quoted for the tokenizer.
    var quoted: String { "'\(password.replacingOccurrences(of: "'", with: "'\"'\"'"))'" }

    func leaks(_ text: String) -> Bool { text.contains("Q7") || text.contains("Q8") }

    func onTheQRZScreen() throws -> CLI {
        let cli = try CLI("carrierwave")
        let ready = try cli.run("play", stdin: "launch\nnext\nnext\n")
        try #require(ready.status == 0, "\(ready.stderr)")
        return cli
    }

    @Test func echoedScriptLinesInTextAndJSON() throws {
        for json in [false, true] {
            let cli = try onTheQRZScreen()
            let script = """
                connect username=W1AW "password=\(password.replacingOccurrences(of: "\"", with: ""))" extra
                connect username=W1AW password=\(quoted)
                """
            let result = try cli.run(["play", "--echo"] + (json ? ["--json"] : []), stdin: script + "\n")
            #expect(
                !leaks(result.stdout + result.stderr), "play --echo\(json ? " --json" : ""): \(result.stdout)"
            )
            #expect(result.stdout.contains("password=‹redacted›"))
        }
    }

    @Test func malformedLinesInPlayInteractiveAndArguments() throws {
        let cli = try onTheQRZScreen()
        let lines = [
            "connect username=W1AW password:\(quoted)",
            "connect username=W1AW PASSWORD = \(quoted)",
            "connect password=\(quoted) junk-without-equals",
            "fly password=\(quoted)",
            "visit password=\(quoted)",
            "wait password=\(quoted)",
            "replay password=\(quoted)",
            "explain password=\(quoted)",
            "connect password=\"never closed \(password.replacingOccurrences(of: "\"", with: ""))",
        ]
        for line in lines {
            for json in [false, true] {
                let played = try cli.run(["play", "--echo"] + (json ? ["--json"] : []), stdin: line + "\n")
                #expect(
                    !leaks(played.stdout + played.stderr), "play: \(line) -> \(played.stdout)\(played.stderr)"
                )
            }
        }
        let interactive = try cli.run([], stdin: lines.joined(separator: "\n") + "\nstatus\n")
        #expect(!leaks(interactive.stdout + interactive.stderr), "interactive: \(interactive.stderr)")
        #expect(interactive.stderr.contains("‹redacted›"))
        // The same as arguments: parse errors, usage, refusals, each command's --json.
        let secret = "password=\(password)"
        let commands: [[String]] = [
            ["do", "connect", "username=W1AW", "password:\(password)"],
            ["do", "connect", secret, "junk"],
            ["do", "connect", "--\(secret)"],
            ["wait", secret], ["visit", secret], ["signal", secret], ["replay", secret], ["reset", secret],
            ["explain", secret], ["graph", "--flow", secret], ["launch", "--app-version", secret],
            ["status", "--user", secret], ["status", "--permission", secret], ["status", "--answer", secret],
            ["report", "--since", secret], ["graph", "--format", secret],
        ]
        for command in commands {
            for json in [false, true] {
                let result = try cli.run(command + (json ? ["--json"] : []))
                #expect(result.status != 0, "\(command) was accepted")
                #expect(!leaks(result.stdout + result.stderr), "\(command): \(result.stdout)\(result.stderr)")
            }
        }
    }

    /// A secret's value typed without its `=` (`passwordhunter2`, `"password hunter2"`, any case)
    /// is a malformed parameter: the usage error quotes the word with everything after the field's
    /// name masked, in arguments, scripts and sessions, text and JSON.
    @Test func aSecretWithoutItsEqualsSignIsMaskedInTheUsageError() throws {
        let cli = try onTheQRZScreen()
        let password = password.replacingOccurrences(of: "'", with: "").replacingOccurrences(
            of: "\"", with: "")
        let noEquals = password.replacingOccurrences(of: "=", with: "")
        for word in [
            "password\(password)", "PassWord \(password)", "password\t\(password)", "password\(noEquals)",
            "PASSWORD \(noEquals)", "passwordX=\(noEquals)",
        ] {
            for json in [false, true] {
                let result = try cli.run(["do", "connect", "username=W1AW", word] + (json ? ["--json"] : []))
                #expect(result.status != 0, "\(word): \(result.stderr)")
                #expect(!leaks(result.stdout + result.stderr), "\(word): \(result.stdout)\(result.stderr)")
                #expect(
                    (result.stdout + result.stderr).contains("‹redacted›"),
                    "\(result.stdout)\(result.stderr)"
                )
            }
            let quotedWord = "'\(word)'"
            let played = try cli.run(["play", "--echo"], stdin: "connect username=W1AW \(quotedWord)\n")
            #expect(played.status == 1)
            #expect(!leaks(played.stdout + played.stderr), "play: \(played.stdout)\(played.stderr)")
        }
        // A word that is not a secret's is quoted whole, as before.
        let other = try cli.run("do", "connect", "usernameW1AW")
        #expect(other.stderr.contains("got 'usernameW1AW'"), "\(other.stderr)")
    }

    /// The accepted path: the password is used (the account connects) and then is nowhere, in any
    /// command's output, the journal, report, explain, the database file or its WAL.
    /// The account token is never sent over plain http to another machine: refused before any
    /// connection, with one line that says to use https; loopback stays allowed for development.
    @Test func theTokenIsNotSentOverPlainHTTPToAnotherHost() throws {
        var cli = try CLI("growth")
        cli.environment["ONBOARDING_TOKEN"] = "obt-secret-\(UUID().uuidString)"
        let refused = try cli.run("sync", "--server", "http://sync.example.com:8080")
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("use https://sync.example.com:8080"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("obt-secret") && !refused.stdout.contains("obt-secret"))
        #expect(!FileManager.default.fileExists(atPath: cli.database))
        // Loopback over http is allowed (here nothing listens: the sync is only postponed).
        let loopback = try cli.run("sync", "--server", "http://127.0.0.1:9")
        #expect(!loopback.stderr.contains("refusing to send"), "\(loopback.stderr)")
    }

    @Test func anAcceptedPasswordIsNowhereAfterwards() throws {
        let cli = try onTheQRZScreen()
        let connected = try cli.run(
            ["do", "connect", "username=W1AW", "password=-", "--json"], stdin: password + "\n")
        #expect(connected.status == 0, "\(connected.stderr)")
        #expect(try cli.json("status").state["accounts"] as? [String: String] == ["qrz": "W1AW"])
        var everything = connected.stdout + connected.stderr
        for command in [["show"], ["status"], ["journal"], ["report"], ["explain"], ["graph"]] {
            for json in [false, true] {
                let result = try cli.run(command + (json ? ["--json"] : []))
                #expect(result.status == 0, "\(command): \(result.stderr)")
                everything += result.stdout + result.stderr
            }
        }
        #expect(!leaks(everything))
        #expect(everything.contains("‹redacted›"))
        #expect(cli.databaseBytes().range(of: Data("Q7".utf8)) == nil)
        #expect(cli.databaseBytes().range(of: Data("Q8".utf8)) == nil)
        #expect(!leaks(try CLI.sqlite(cli.database, ".dump")))
    }
}
