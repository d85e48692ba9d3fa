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
