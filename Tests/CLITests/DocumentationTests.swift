import Foundation
import Testing

/// The README and every page under Docs/: links that lead somewhere, a README a newcomer reads in
/// five minutes, and pages that say first what they are for.
///
/// A link to another file of the repository must name a file that exists, and its `#anchor` a
/// heading of that file (GitHub's anchors: the heading in lower case, punctuation dropped, spaces
/// as hyphens). Links to other sites are not fetched (the tests run offline); they are only
/// counted, so a README that grows a web of them shows here.
@Suite("The README and the docs")
struct DocumentationTests {
    static let root = URL(fileURLWithPath: GrammarTests.packageRoot)

    static var pages: [URL] {
        let docs = root.appendingPathComponent("Docs")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? []
        return [root.appendingPathComponent("README.md"), root.appendingPathComponent("CHANGELOG.md")]
            + names.filter { $0.hasSuffix(".md") }.sorted().map { docs.appendingPathComponent($0) }
    }

    /// Every `[text](target)` and `![alt](target)` outside code blocks and code spans.
    static func links(in text: String) -> [String] {
        var links: [String] = []
        var inCode = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inCode.toggle()
                continue
            }
            if inCode { continue }
            // Code spans may hold brackets that are not links.
            let prose = line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
            var rest = Substring(prose)
            while let close = rest.range(of: "](") {
                let after = rest[close.upperBound...]
                guard let end = after.firstIndex(of: ")") else { break }
                links.append(String(after[..<end]))
                rest = after[end...]
            }
        }
        return links
    }

    /// GitHub's anchor for a heading.
    static func anchor(_ heading: String) -> String {
        let lowered = heading.lowercased()
        let kept = lowered.unicodeScalars.filter {
            CharacterSet.alphanumerics.contains($0) || $0 == " " || $0 == "-" || $0 == "_"
        }
        return String(String.UnicodeScalarView(kept)).replacingOccurrences(of: " ", with: "-")
    }

    static func anchors(of file: URL) throws -> Set<String> {
        let text = try String(contentsOf: file, encoding: .utf8)
        var anchors: Set<String> = []
        var inCode = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode, line.hasPrefix("#") else { continue }
            anchors.insert(
                anchor(String(line.drop(while: { $0 == "#" }).trimmingCharacters(in: .whitespaces))))
        }
        return anchors
    }

    @Test func everyLinkOfTheREADMEAndTheDocsLeadsToAFileAndHeadingThatExist() throws {
        var followed = 0
        for page in Self.pages {
            let text = try String(contentsOf: page, encoding: .utf8)
            let name = page.path.replacingOccurrences(of: Self.root.path + "/", with: "")
            for link in Self.links(in: text) where !link.hasPrefix("http://") && !link.hasPrefix("https://") {
                followed += 1
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let path = String(parts[0])
                let target =
                    path.isEmpty
                    ? page : page.deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL
                guard FileManager.default.fileExists(atPath: target.path) else {
                    Issue.record("\(name): the link \(link) leads to no file (\(target.path))")
                    continue
                }
                if parts.count == 2, target.pathExtension == "md" {
                    let anchors = try Self.anchors(of: target)
                    #expect(
                        anchors.contains(String(parts[1])),
                        "\(name): \(link) names no heading of \(target.lastPathComponent)")
                }
            }
        }
        // The README alone links to every page of Docs/ and to the product pages.
        #expect(followed > 40, "\(followed) links followed")
    }

    @Test func theREADMEIsUnder120LinesAndLinksEveryPageOfDocs() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines < 120, "README.md has \(lines) lines")
        let linked = Set(Self.links(in: readme).map { String($0.split(separator: "#").first ?? "") })
        for page in Self.pages where page.deletingLastPathComponent().lastPathComponent == "Docs" {
            #expect(
                linked.contains("Docs/" + page.lastPathComponent),
                "README.md links no Docs/\(page.lastPathComponent)")
        }
    }

    /// Each page of Docs/ opens, under its title, with a paragraph of at least two sentences.
    @Test func everyPageOfDocsStartsWithTwoSentencesSayingWhatItIsFor() throws {
        for page in Self.pages where page.deletingLastPathComponent().lastPathComponent == "Docs" {
            let text = try String(contentsOf: page, encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.first?.hasPrefix("# ") == true, "\(page.lastPathComponent) starts with its title")
            let body = lines.dropFirst().drop(while: { $0.trimmingCharacters(in: .whitespaces).isEmpty })
            let paragraph = body.prefix(while: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }).joined(
                separator: " ")
            let startsAsProse =
                !paragraph.isEmpty
                && !["#", "|", "```", "- ", "* ", ">", "!["].contains { paragraph.hasPrefix($0) }
            let sentences =
                paragraph.components(separatedBy: ". ").count + (paragraph.hasSuffix(".") ? 0 : -1)
            #expect(
                startsAsProse && sentences >= 2,
                "\(page.lastPathComponent) opens with: \(paragraph.prefix(120))")
        }
    }
}
