import Foundation
import TestThreads
import Testing
import TourFixtures

/// What a product's CLI loads when it starts. The shared modules import only `FoundationEssentials`
/// on Linux: `Foundation` (swift-corelibs-foundation) brings ICU and CoreFoundation, which tripled a
/// one-shot command's memory and doubled its start-up (Docs/Performance.md, the cold start), and
/// FoundationNetworking brings libcurl and some thirty libraries that only a sync needs (loaded then).
/// A debug build links each imported Foundation library dynamically, so `ldd` shows what any module
/// imported.
@Suite("What a product's CLI links", .ownThread)
struct LinkageTests {
    @Test(arguments: GrammarTests.products)
    func aProductsCLILinksNeitherFoundationNorANetworkingLibrary(product: String) throws {
        #if os(Linux)
            let ldd = Process()
            ldd.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
            ldd.arguments = [BuiltExecutables.folder.appendingPathComponent(product).path]
            let output = try ChildProcess.spawning {
                let output = Pipe()
                ldd.standardOutput = output
                try ldd.run()
                return output
            }
            let text = String(decoding: output.fileHandleForReading.readUntilEnd(), as: UTF8.self)
            ldd.waitUntilExit()
            let libraries = text.split(separator: "\n").compactMap { line in
                line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
            }
            #expect(libraries.contains { $0.hasPrefix("libsqlite3") }, "\(text)")
            let unwanted = libraries.filter { library in
                [
                    "libFoundation.so", "libFoundationInternationalization", "lib_FoundationICU",
                    "libFoundationNetworking",
                    "libcurl",
                ]
                .contains { library.hasPrefix($0) }
            }
            #expect(unwanted.isEmpty, "\(product) links \(unwanted.joined(separator: ", "))")
        #endif
    }
}
