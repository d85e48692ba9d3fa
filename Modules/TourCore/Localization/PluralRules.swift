/// How a language picks a plural form for a whole number: the CLDR categories it uses, and which one
/// a count falls in. `{#apps|app|apps}` gives one form per category, in the order of
/// ``categories``: English and Portuguese two (one, other), Russian and Polish three (one, few,
/// many), Japanese one.
public struct PluralRules: Sendable, Equatable {
    public enum Category: String, Sendable, CaseIterable { case zero, one, two, few, many, other }

    /// English's rules (one for 1, other for the rest).
    public static let english = PluralRules(.english)

    /// The categories whole numbers fall in, in CLDR order: the forms a plural template gives.
    public let categories: [Category]
    private let rule: Rule

    private enum Rule: Sendable, Equatable {
        case oneIsSingular, zeroAndOneSingular, noPlural, eastSlavic, polish, czech, arabic
    }

    /// The rules of `locale`'s language (CLDR's cardinal rules for whole numbers). A language not
    /// listed here follows English: one for 1, other for the rest.
    public init(_ locale: LocaleTag) {
        switch locale.language {
        case "ja", "zh", "ko", "vi", "th", "id", "ms", "lo", "my", "km":
            rule = .noPlural
        case "fr", "hi", "bn", "fa", "am", "zu", "kn", "gu":
            rule = .zeroAndOneSingular
        case "pt" where locale.rawValue != "pt-PT":
            rule = .zeroAndOneSingular
        case "ru", "uk", "be":
            rule = .eastSlavic
        case "pl":
            rule = .polish
        case "cs", "sk":
            rule = .czech
        case "ar":
            rule = .arabic
        default:
            rule = .oneIsSingular
        }
        categories =
            switch rule {
            case .noPlural: [.other]
            case .oneIsSingular, .zeroAndOneSingular: [.one, .other]
            case .eastSlavic, .polish: [.one, .few, .many]
            case .czech: [.one, .few, .other]
            case .arabic: [.zero, .one, .two, .few, .many, .other]
            }
    }

    /// The category of a count.
    public func category(_ count: Int) -> Category {
        let n = abs(count)
        let (mod10, mod100) = (n % 10, n % 100)
        switch rule {
        case .noPlural: return .other
        case .oneIsSingular: return n == 1 ? .one : .other
        case .zeroAndOneSingular: return n <= 1 ? .one : .other
        case .eastSlavic:
            if mod10 == 1 && mod100 != 11 { return .one }
            return (2...4).contains(mod10) && !(12...14).contains(mod100) ? .few : .many
        case .polish:
            if n == 1 { return .one }
            return (2...4).contains(mod10) && !(12...14).contains(mod100) ? .few : .many
        case .czech:
            return n == 1 ? .one : (2...4).contains(n) ? .few : .other
        case .arabic:
            switch n {
            case 0: return .zero
            case 1: return .one
            case 2: return .two
            default: return (3...10).contains(mod100) ? .few : (11...99).contains(mod100) ? .many : .other
            }
        }
    }

    /// The form for `count` among `forms` (one per category, in order); nil when the number of
    /// forms is not the number of categories.
    public func form(for count: Int, among forms: [String]) -> String? {
        guard forms.count == categories.count, let index = categories.firstIndex(of: category(count)) else {
            return nil
        }
        return forms[index]
    }
}
