/// A locale as a language tag: `pt-BR`, `en`, `zh-Hant-TW`. Read from what people and systems
/// write (`pt_BR.UTF-8` in `$LANG`, `PT-br` typed by hand) and kept in one form: the language in
/// lower case, a script in title case, a region in upper case, joined by `-`.
public struct LocaleTag: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The tag as written in documents and tables: `pt-BR`.
    public let rawValue: String

    /// Reads a tag, or nil when `text` is not one: a language of 2 or 3 letters, then optionally a
    /// script of 4 letters and a region of 2 letters or 3 digits. A POSIX locale's encoding and
    /// modifier (`.UTF-8`, `@euro`) are dropped and `_` reads as `-`.
    public init?(_ text: String) {
        var text = Substring(text)
        if let cut = text.firstIndex(where: { $0 == "." || $0 == "@" }) { text = text[..<cut] }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "_", omittingEmptySubsequences: false) }
        guard let language = parts.first, (2...3).contains(language.count), language.allSatisfy(Self.isLetter)
        else { return nil }
        var subtags = [language.lowercased()]
        var rest = parts.dropFirst()
        if let script = rest.first, script.count == 4, script.allSatisfy(Self.isLetter) {
            subtags.append(script.prefix(1).uppercased() + script.dropFirst().lowercased())
            rest = rest.dropFirst()
        }
        if let region = rest.first,
            (region.count == 2 && region.allSatisfy(Self.isLetter))
                || (region.count == 3 && region.allSatisfy { $0.isASCII && $0.isNumber })
        {
            subtags.append(region.uppercased())
            rest = rest.dropFirst()
        }
        guard rest.isEmpty else { return nil }
        rawValue = subtags.joined(separator: "-")
    }

    /// The language subtag: `pt` of `pt-BR`.
    public var language: String { String(rawValue.prefix { $0 != "-" }) }

    /// The tag and each shorter one, most specific first: `zh-Hant-TW`, `zh-Hant`, `zh`.
    public var fallbacks: [LocaleTag] {
        var tags = [self]
        var text = rawValue
        while let dash = text.lastIndex(of: "-") {
            text = String(text[..<dash])
            if let shorter = LocaleTag(text) { tags.append(shorter) }
        }
        return tags
    }

    /// Where a string for this locale is looked for, in order, ending with the source locale:
    /// `pt-BR` → `pt` → `en`.
    public func chain(endingWith source: LocaleTag) -> [LocaleTag] {
        var seen: Set<LocaleTag> = []
        return (fallbacks + [source]).filter { seen.insert($0).inserted }
    }

    /// The locale the POSIX environment asks for: the first of `LC_ALL`, `LC_MESSAGES` and `LANG`
    /// that is set and not empty (pass their values in that order). `C` and `POSIX` ask for none
    /// (nil: the catalog's source locale), as does a value that is not a tag.
    public static func fromEnvironment(_ values: [String?]) -> LocaleTag? {
        guard let value = values.compactMap({ $0 }).first(where: { !$0.isEmpty }) else { return nil }
        let bare = value.prefix { $0 != "." && $0 != "@" }
        if bare == "C" || bare == "POSIX" { return nil }
        return LocaleTag(value)
    }

    public var description: String { rawValue }
    public static func < (lhs: LocaleTag, rhs: LocaleTag) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The tag every catalog is written in unless it says otherwise.
    public static let english = LocaleTag(canonical: "en")

    /// A tag already in its one form (a literal above).
    private init(canonical: String) { rawValue = canonical }

    private static func isLetter(_ character: Character) -> Bool { character.isASCII && character.isLetter }
}
