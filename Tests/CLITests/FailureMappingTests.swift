import Testing
import TourCore

@testable import OnboardingCLI

/// What each kind of error becomes on the command line: its code and exit status.
@Suite("Failure mapping")
struct FailureMappingTests {
    @Test func anEffectThatDoesNotFitIsARefusalThatWroteNothing() {
        let failure = Runner.failure(
            for: EffectError("domain state key 'x' is not declared (declared: none)"), hint: nil)
        #expect(failure.code == "effect")
        #expect(failure.exitCode == 1)
        #expect(
            failure.message
                == "refused: domain state key 'x' is not declared (declared: none); nothing was written")
    }

    @Test func everyCodeIsInTheCLIPage() throws {
        let readme = try String(contentsOfFile: GrammarTests.packageRoot + "/Docs/CLI.md", encoding: .utf8)
        // (The tests' own `CLIFailure` hides the module's; its type is reached through a value.)
        let failure = Runner.failure(for: EffectError("x"), hint: nil)
        for code in type(of: failure).allCodes {
            #expect(readme.contains("`\(code)`"), "Docs/CLI.md names \(code)")
        }
    }
}
