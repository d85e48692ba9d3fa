import TourCodec
import TourCore

/// A catalog's texts in the formats translators' tools read and write: XLIFF 2.0 (OASIS; one
/// source and one target locale a file), Xcode's String Catalog (`.xcstrings`, JSON; every locale
/// in one file) and the catalog's own table file (`strings/LOCALE.json`).
///
/// Placeholders and plural forms stay as the catalog writes them (`{step}`, `{#total|step|steps}`):
/// the import checks that each translation keeps its source's (``TranslationImport``).
public struct TranslationFile: Sendable, Equatable {
    public enum Format: String, Sendable, CaseIterable {
        /// The catalog's table file for one locale (`Apps/<Product>/Onboarding/strings/LOCALE.json`).
        case table
        case xliff
        case xcstrings

        /// The file name extension a file of this format takes.
        public var fileExtension: String {
            switch self {
            case .table: "json"
            case .xliff: "xliff"
            case .xcstrings: "xcstrings"
            }
        }

        public var mediaType: String {
            switch self {
            case .table, .xcstrings: "application/json; charset=utf-8"
            case .xliff: "application/xliff+xml; charset=utf-8"
            }
        }
    }

    /// One text of one locale as the file has it.
    public struct Entry: Sendable, Equatable {
        /// The source text the translator saw (nil when the file does not say).
        public var source: String?
        /// The translation; empty when there is none yet.
        public var text: String
        /// Whether the file marks it done (XLIFF `translated`, `reviewed` or `final`; a String
        /// Catalog's `translated`; every entry of a table file). An entry not marked done counts
        /// only if its text was changed.
        public var isDone: Bool

        public init(source: String?, text: String, isDone: Bool) {
            self.source = source
            self.text = text
            self.isDone = isDone
        }
    }

    public var format: Format
    /// The locale the file's source texts are in, when it says.
    public var sourceLocale: LocaleTag?
    /// Per target locale, the entries by text id.
    public var locales: [LocaleTag: [String: Entry]]

    public init(format: Format, sourceLocale: LocaleTag?, locales: [LocaleTag: [String: Entry]]) {
        self.format = format
        self.sourceLocale = sourceLocale
        self.locales = locales
    }

    /// The largest file read: a catalog document is at most 256 KiB, and its texts in XLIFF take
    /// a few times their size.
    public static let maximumBytes = 1 << 20
}

/// Why a file cannot be read as translations: every problem found, each with where it is.
public struct TranslationFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public var problems: [String]

    public init(_ problems: [String]) { self.problems = problems }
    public init(_ problem: String) { self.problems = [problem] }

    public var description: String { problems.joined(separator: "; ") }
}

// MARK: - Reading

extension TranslationFile {
    /// Reads a translation file of any of the three formats, told apart by its content.
    ///
    /// - Throws: ``TranslationFileError`` listing every problem: a format that is not one of the
    ///   three, a structure that is not the format's, a translation with inline markup or plural
    ///   variations (write the catalog's own `{#n|…}` in the text instead).
    public init(text: String) throws(TranslationFileError) {
        guard text.utf8.count <= Self.maximumBytes else {
            throw TranslationFileError(
                """
                the file is \(text.utf8.count) bytes; a translation file is at most \(Self.maximumBytes) \
                bytes
                """
            )
        }
        switch text.first(where: { !$0.isWhitespace && $0 != "\u{FEFF}" }) {
        case "<":
            self = try Self.xliff(text)
        case "{":
            let value: TourValue
            do { value = try TourValue(jsonText: text) } catch {
                throw TranslationFileError("the file is not JSON: \(error)")
            }
            guard case .object(let members) = value else { throw Self.unknownFormat }
            if members["sourceLanguage"] != nil {
                self = try Self.stringCatalog(members)
            } else if members["locale"] != nil {
                do {
                    let file = try StringTableFile(text: text)
                    self.init(
                        format: .table, sourceLocale: nil,
                        locales: [
                            file.locale: file.table.mapValues {
                                Entry(source: $0.source, text: $0.text, isDone: true)
                            }
                        ])
                } catch {
                    throw TranslationFileError("not a table file: \(error)")
                }
            } else {
                throw Self.unknownFormat
            }
        default:
            throw Self.unknownFormat
        }
    }

    static let unknownFormat = TranslationFileError(
        """
        not a translation file: give an XLIFF 2.0 file, a String Catalog (.xcstrings) or a table file \
        ({\"locale\": …, \"strings\": …})
        """
    )

    private static func locale(_ text: String?, _ what: String) throws(TranslationFileError) -> LocaleTag {
        guard let text else { throw TranslationFileError("\(what) is not given") }
        guard let locale = LocaleTag(text) else {
            throw TranslationFileError("\(what) '\(text)' is not a language tag such as en, pt or pt-BR")
        }
        return locale
    }

    private static func xliff(_ text: String) throws(TranslationFileError) -> TranslationFile {
        let root: XMLElement
        do { root = try XMLSubsetReader.document(text) } catch {
            throw TranslationFileError("not XML that is read here: \(error)")
        }
        guard root.name == "xliff" else {
            throw TranslationFileError("the root element is <\(root.name)>, not <xliff>")
        }
        guard let version = root.attributes["version"], version.hasPrefix("2.") else {
            throw TranslationFileError(
                """
                XLIFF \(root.attributes["version"] ?? "without a version") is not read: \
                export XLIFF 2.0 from your tool
                """
            )
        }
        let source = try locale(root.attributes["srcLang"], "the file's srcLang")
        let target = try locale(
            root.attributes["trgLang"], "the file's trgLang (the language translated into)")
        var entries: [String: Entry] = [:]
        var problems: [String] = []
        func read(_ element: XMLElement) {
            for child in element.children {
                guard case .element(let child) = child else { continue }
                switch child.name {
                case "group": read(child)
                case "unit":
                    guard let id = child.attributes["id"], !id.isEmpty else {
                        problems.append("line \(child.line): a <unit> without an id")
                        continue
                    }
                    let segments = child.elements("segment")
                    guard !segments.isEmpty else {
                        problems.append("line \(child.line): unit \(id) has no <segment>")
                        continue
                    }
                    var sourceText = ""
                    var targetText = ""
                    var done = true
                    for segment in segments {
                        for part in [segment.element("source"), segment.element("target")].compactMap({ $0 })
                        where part.hasChildElements {
                            problems.append(
                                """
                                line \(part.line): the <\(part.name)> of unit \(id) has inline markup; \
                                write the text with its placeholders as {name}
                                """
                            )
                        }
                        sourceText += segment.element("source")?.text ?? ""
                        targetText += segment.element("target")?.text ?? ""
                        done =
                            done
                            && ["translated", "reviewed", "final"].contains(
                                segment.attributes["state"] ?? "initial")
                    }
                    guard
                        entries.updateValue(
                            Entry(source: sourceText, text: targetText, isDone: done), forKey: id) == nil
                    else {
                        problems.append("line \(child.line): unit \(id) is given twice")
                        continue
                    }
                default: continue
                }
            }
        }
        for file in root.elements("file") { read(file) }
        guard problems.isEmpty else { throw TranslationFileError(problems) }
        return TranslationFile(format: .xliff, sourceLocale: source, locales: [target: entries])
    }

    private static func stringCatalog(_ members: [String: TourValue]) throws(TranslationFileError)
        -> TranslationFile
    {
        guard case .string(let sourceText)? = members["sourceLanguage"] else {
            throw TranslationFileError("sourceLanguage is not a text")
        }
        let source = try locale(sourceText, "sourceLanguage")
        guard case .object(let texts)? = members["strings"] else {
            throw TranslationFileError("a String Catalog's strings is an object of texts by key")
        }
        var locales: [LocaleTag: [String: Entry]] = [:]
        var problems: [String] = []
        for (key, entryValue) in texts.sorted(by: { $0.key < $1.key }) {
            guard case .object(let entry) = entryValue else {
                problems.append("strings.\(key) is not an object")
                continue
            }
            if case .bool(false)? = entry["shouldTranslate"] { continue }
            guard case .object(let localizations)? = entry["localizations"] else { continue }
            var sourceValue: String?
            if case .object(let unit)? = localizations[source.rawValue],
                case .object(let string)? = unit["stringUnit"],
                case .string(let value)? = string["value"]
            {
                sourceValue = value
            }
            for (name, localizationValue) in localizations.sorted(by: { $0.key < $1.key })
            where name != source.rawValue {
                let at = "strings.\(key).localizations.\(name)"
                guard let locale = LocaleTag(name), locale.rawValue == name else {
                    problems.append("\(at): '\(name)' is not a language tag such as pt or pt-BR")
                    continue
                }
                guard case .object(let localization) = localizationValue else {
                    problems.append("\(at) is not an object")
                    continue
                }
                if localization["variations"] != nil || localization["substitutions"] != nil {
                    problems.append(
                        """
                        \(at) has variations; write plural forms in the value as the catalog does \
                        ({#count|one|other})
                        """
                    )
                    continue
                }
                guard case .object(let unit)? = localization["stringUnit"],
                    case .string(let value)? = unit["value"]
                else {
                    problems.append("\(at) has no stringUnit with a value")
                    continue
                }
                let state: String
                if case .string(let given)? = unit["state"] { state = given } else { state = "translated" }
                locales[locale, default: [:]][key] = Entry(
                    source: sourceValue, text: value, isDone: state == "translated")
            }
        }
        guard problems.isEmpty else { throw TranslationFileError(problems) }
        return TranslationFile(format: .xcstrings, sourceLocale: source, locales: locales)
    }
}
