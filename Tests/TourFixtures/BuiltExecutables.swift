import Foundation

/// Where SwiftPM built the products' executables: beside the test runner, whatever the build
/// folder and configuration.
public enum BuiltExecutables {
    public static let folder: URL = {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = runner.deletingLastPathComponent()
        while folder.path != "/" {
            if FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("lockedin").path) {
                return folder
            }
            folder = folder.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(
            ".build/debug")
    }()
}

extension BuiltExecutables {
    /// This process's environment for a product's executable, without the variables that choose a
    /// locale (`LC_ALL`, `LC_MESSAGES`, `LANG`): output compared with recorded text must not depend
    /// on the language of the machine the tests run on. Tests of locales set them again.
    public static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in ["LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"] { environment[name] = nil }
        return environment
    }
}
