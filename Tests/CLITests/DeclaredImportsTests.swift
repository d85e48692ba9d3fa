import Foundation
import TestThreads
import Testing
import TourCodec
import TourFixtures

/// Every module a target imports is one Package.swift says it depends on: a module imported only
/// because another target's dependencies happen to build it breaks the day that target changes, and
/// hides what each module really needs. The manifest is read as SwiftPM reads it
/// (`swift package dump-package`, with a scratch folder of its own so the running build's lock is
/// not waited for).
@Suite("Declared imports", .offThePool)
struct DeclaredImportsTests {
    /// Modules of the toolchain and the system, which no manifest declares.
    static let system: Set<String> = [
        "Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Musl", "Darwin", "Dispatch",
        "Testing",
        "XCTest", "Synchronization", "PackagePlugin", "_Concurrency", "os", "Android", "WinSDK",
    ]

    /// Each target of the manifest with a path: its folder and the names it depends on (targets and
    /// products, whose module names are theirs).
    static func manifestTargets() throws -> [(name: String, path: String, dependencies: Set<String>)] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let scratch = Scratch.folder.appendingPathComponent(
            "dump-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        // SwiftPM's own temporary folders and lock in the scratch folder, removed with it.
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": scratch.path]) { $1 }
        process.arguments = [
            "swift", "package", "--package-path", GrammarTests.packageRoot, "--scratch-path", scratch.path,
            "dump-package",
        ]
        let output = try ChildProcess.spawning {
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            return output
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "swift package dump-package failed")
        let manifest = try TourValue(jsonText: String(decoding: data, as: UTF8.self))
        return (manifest.objectValue?["targets"]?.listValue ?? []).compactMap { target in
            guard let object = target.objectValue, let name = object["name"]?.stringValue,
                let path = object["path"]?.stringValue
            else { return nil }
            // Each dependency is {"byName"|"target"|"product": [name, ...]}.
            let names = (object["dependencies"]?.listValue ?? []).compactMap { dependency in
                dependency.objectValue?.values.first?.listValue?.first?.stringValue
            }
            return (name, path, Set(names))
        }
    }

    /// The modules a file imports at its top level (an `import` inside a string literal, such as
    /// generated code, is indented and not counted).
    static func topLevelImports(of file: String) -> [String] {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let first = line.first, first != " ", first != "\t" else { return nil }
            let words = line.split(separator: " ")
            guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                words[..<index].allSatisfy({
                    $0.hasPrefix("@") || ["public", "package", "internal"].contains($0)
                })
            else { return nil }
            // `import struct Module.Name` names its module after the kind.
            let kinds: Set<Substring> = [
                "struct", "class", "enum", "protocol", "func", "var", "let", "typealias",
            ]
            let named =
                kinds.contains(words[index + 1]) && index + 2 < words.count
                ? words[index + 2] : words[index + 1]
            return String(named.split(separator: ".")[0])
        }
    }

    @Test func everyImportedModuleIsADeclaredDependency() throws {
        let targets = try Self.manifestTargets()
        #expect(targets.count > 20)
        for target in targets {
            let files = LayeringTests.swiftFiles(under: target.path)
            let imported = Set(files.flatMap(Self.topLevelImports(of:)))
            let undeclared = imported.subtracting(target.dependencies).subtracting(Self.system).subtracting([
                target.name
            ])
            #expect(
                undeclared.isEmpty,
                "\(target.name) imports \(undeclared.sorted()) without declaring them in Package.swift")
        }
    }
}
