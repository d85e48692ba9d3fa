import Foundation
import Testing
import TourCore
import TourFixtures

@Suite("Secret values masked wherever input is quoted back")
struct SecretRedactorTests {
    let redactor = SecretRedactor(secretFields: ["password"])

    @Test(arguments: [
        ("connect username=W1AW password=hunter2", "connect username=W1AW password=‹redacted›"),
        ("PASSWORD=hunter2", "PASSWORD=‹redacted›"),
        ("password = hunter2 next", "password = ‹redacted› next"),
        ("password:hunter2", "password:‹redacted›"),
        ("password==hunter2", "password=‹redacted›"),
        (#"password="two words" after"#, "password=‹redacted› after"),
        ("password='two words' after", "password=‹redacted› after"),
        (#"password="never closed and more"#, "password=‹redacted›"),
        (#"password=ab"c d"e tail"#, "password=‹redacted› tail"),
        ("got 'password=hunter2' as a parameter", "got 'password=‹redacted›"),
        ("--password=hunter2", "--password=‹redacted›"),
        ("username=a,password=b", "username=a,password=‹redacted›"),
        ("password is required", "password is required"),
        ("password=", "password="),
        ("a password: none given", "a password: ‹redacted› given"),
    ])
    func masksTheValueInText(line: String, expected: String) {
        #expect(redactor.redact(line) == expected)
    }

    @Test(arguments: [
        ("connect passwordhunter2", "connect password‹redacted›"),
        ("got 'password hunter2'", "got 'password‹redacted›'"),
        ("its parameters: username, password.", "its parameters: username, password."),
        ("'password' is a parameter", "'password' is a parameter"),
        ("mypasswordhunter2 stays a word", "mypasswordhunter2 stays a word"),
    ])
    func typedInputMasksAValueGluedToItsKey(line: String, expected: String) {
        #expect(redactor.redactInput(line) == expected)
    }

    @Test func aMalformedParameterKeepsOnlyTheSecretName() {
        #expect(redactor.redactWord("PASSWORDhunter2") == "PASSWORD‹redacted›")
        #expect(redactor.redactWord("password") == "password")
        #expect(redactor.redactWord("username") == "username")
    }

    @Test func productsWithoutSecretsChangeNothing() {
        let text = #"password=x {"a":"b"}"#
        #expect(SecretRedactor.none.redact(text) == text)
        #expect(SecretRedactor.none.redactJSON(text) == text)
    }

    @Test func aJSONDocumentStaysValidAndItsKeysAreStructureNotInput() throws {
        let document = try encode(["line": #"connect password="a b" x"#, "password": "‹redacted›"])
        let masked = redactor.redactJSON(document)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(masked.utf8)) as? [String: String])
        #expect(object["line"] == "connect password=‹redacted› x")
        #expect(object["password"] == "‹redacted›")
    }

    /// Random passwords made of the characters that break naive masking (quotes, backslashes,
    /// separators, spaces inside quotes, non-ASCII), in many line shapes, as text and as JSON:
    /// neither end of the password ever appears in the output.
    @Test func randomPasswordsNeverSurviveInTextOrJSON() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#"abcXYZ019"'\=:,#-_/é🙂"#)
        for _ in 0..<2_000 {
            let middle = String(
                (0..<Int.random(in: 0...10, using: &generator)).map { _ in
                    alphabet.randomElement(using: &generator) ?? "a"
                })
            let password = "Q7" + middle + "Q8"
            let quoted = password.contains("\"") ? "'\(password)'" : "\"\(password) and more\""
            let shapes = [
                "connect username=W1AW password=\(password)",
                "connect password=\(quoted) username=W1AW",
                "refused 'password=\(password)': not a parameter",
                "PassWord : \(password)",
                "junk password=\(password)",
            ]
            for line in shapes {
                let word = line.contains(quoted) ? quoted : password
                // As the tokenizer reads it, an unquoted value ends at whitespace.
                guard !word.contains(" ") || word.hasPrefix("\"") || word.hasPrefix("'") else { continue }
                let text = redactor.redact(line)
                #expect(!text.contains("Q7") && !text.contains("Q8"), "text: \(line) -> \(text)")
                let json = redactor.redactJSON(try encode(["line": line]))
                let decoded = try #require(
                    try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
                #expect(
                    !json.contains("Q7") && !json.contains("Q8") && !(decoded["line"] ?? "").contains("Q8"),
                    "JSON: \(line) -> \(json)")
            }
        }
    }

    private func encode(_ value: [String: String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The journal's redaction (asked per event, field by field) masks exactly the parameters named
    /// like a secret field of the catalog (a flow's or a free one), in any catalog.
    @Test(arguments: 0..<200)
    func anEventsSecretParametersAreTheCatalogsSecretFields(seed: Int) {
        var generator = CatalogGenerator(seed: UInt64(seed) &* 0x9E37_79B9 &+ 7)
        var catalog = generator.catalog()
        // One secret at least, a free one, beside whatever the generator made.
        catalog.freeFields.append(FieldSpec("pin", .secret))
        let names =
            catalog.flows.flatMap { $0.fields.map(\.name) } + catalog.freeFields.map(\.name) + [
                "password", "note",
            ]
        let parameters = Dictionary(
            names.map { ($0, "value of \($0)") }, uniquingKeysWith: { first, _ in first })
        let redacted = TourEngine(catalog: catalog).redacted(.actionPerformed("act", parameters: parameters))
        guard case .actionPerformed("act", let clean) = redacted else {
            Issue.record("not the action: \(redacted)")
            return
        }
        let fields = catalog.flows.flatMap(\.fields) + catalog.freeFields
        let secrets = Set(fields.filter { $0.kind == .secret }.map(\.name))
        for (name, value) in parameters {
            #expect(
                clean[name] == (secrets.contains(name) ? "‹redacted›" : value),
                "seed \(seed): \(name)")
        }
        #expect(clean.count == parameters.count)
    }
}
