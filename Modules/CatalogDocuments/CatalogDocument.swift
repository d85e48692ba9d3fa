import TourCodec
import TourCore

/// A catalog as one canonical JSON document: its flows, steps, content, actions, fields, gates,
/// conditions, triggers, policies, haptics, migrations and version, and the vocabulary it uses
/// (the effect kinds with their payloads, context keys and requests its product's code declares).
///
/// The form is canonical: members in sorted order, lists only where order means something (steps,
/// actions, flows in priority order), sets written sorted, a member left out when it holds its
/// default (nothing, an empty list or object, `false`, `always`, a delay of 0), no spaces. The same
/// catalog always gives the same bytes, on every run, machine and build, so its SHA-256 is its
/// ``fingerprint``, and the document reads back into an equal catalog. A document is read strictly:
/// an unknown member, a missing one or a value of the wrong kind is refused with its path.
///
/// Format 1:
///
///     {"app": "lockedin", "flowNoun": "onboarding", "flows": [{"id": "onboarding", "steps": [...], ...}],
///      "format": 1, "name": "LockedIn", "stateScopes": {"default": "install"}, "version": 1,
///      "vocabulary": {"effects": {"activate": {"payload": {...}}}, ...}}
///
/// A whole double inside a literal value (`2.0`) is written `2` and reads back as the whole number
/// 2: JSON has one kind of number.
public struct CatalogDocument: Sendable, Equatable {
    /// The newest document format this build reads. A document is written in the oldest format
    /// that holds it (``writtenFormat``), so a catalog without experiments keeps format 1, its text
    /// and its fingerprint, and a build before experiments refuses one with them by its format.
    public static let format = 3

    /// Format 2 added flows' experiments, format 3 translations (``CatalogStrings``).
    public var writtenFormat: Int {
        !catalog.strings.isStandard ? 3 : catalog.experiments.isEmpty ? 1 : 2
    }

    public var catalog: TourCatalog
    /// What the catalog uses of its product's declarations (without their prose summaries).
    public var vocabulary: CatalogDeclarations

    /// The document of `catalog`, with the part of `declarations` it uses.
    public init(_ catalog: TourCatalog, declarations: CatalogDeclarations) {
        self.catalog = catalog
        var used = declarations.used(by: catalog)
        used.context = used.context.map { key in
            var key = key
            key.summary = ""
            key.remembered = true
            key.range = nil
            key.allowed = nil
            return key
        }
        used.effects = used.effects.map { EffectKind($0.name, payload: $0.payload) }
        // Written as objects, read back sorted: kept sorted so a read document equals the one written.
        used.context.sort { $0.name < $1.name }
        used.effects.sort { $0.name < $1.name }
        self.vocabulary = used
    }

    /// The document as a value (what ``text()`` writes).
    public var value: TourValue {
        guard case .object(var members) = catalog.documentValue else { return catalog.documentValue }
        members["format"] = .int(writtenFormat)
        members["vocabulary"] = vocabulary.documentValue
        return .object(members)
    }

    /// The canonical text: compact JSON, members sorted by their UTF-8 bytes.
    ///
    /// - Throws: ``JSONTextError`` when a number in the catalog is not finite (JSON has no NaN).
    public func text() throws(JSONTextError) -> String { try value.jsonText() }

    /// The SHA-256 of ``text()``, as 64 hexadecimal digits.
    public func fingerprint() throws(JSONTextError) -> String { SHA256Hasher.hex(try text().utf8) }

    /// The first 12 digits of a fingerprint, as people read it.
    public static func short(_ fingerprint: String) -> String { String(fingerprint.prefix(12)) }

    /// Reads a document.
    ///
    /// - Throws: ``CatalogDocumentError`` naming the path of the first thing that is not a document.
    public init(text: String) throws(CatalogDocumentError) {
        try self.init(value: DocumentReader.json(text))
    }

    public init(value: TourValue) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: "")
        let format = try reader.int("format")
        guard format >= 1, format <= Self.format else {
            throw CatalogDocumentError(
                path: "format",
                "document format \(format) is newer than this build reads (\(Self.format)); use a newer build"
            )
        }
        vocabulary = try CatalogDeclarations(
            document: reader.optional("vocabulary") ?? .object([:]), at: "vocabulary")
        catalog = try TourCatalog(document: &reader)
        try reader.finish()
        guard format == writtenFormat else {
            let reason =
                switch writtenFormat {
                case 3:
                    "a document with translations is format 3 (a build before translations must refuse it)"
                case 2:
                    """
                    a document whose flows run experiments is format 2 (a build before experiments must \
                    refuse it)
                    """
                default:
                    """
                    format \(format) is for documents with experiments (2) or translations (3); \
                    this one has neither, so it is format 1
                    """
                }
            throw CatalogDocumentError(path: "format", reason)
        }
    }
}

/// Why a document could not be read: where, and what was expected there.
public struct CatalogDocumentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The document path of the problem: `flows[walkthrough].steps[2].actions[0].outcome`.
    public var path: String
    public var message: String

    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { path.isEmpty ? message : "at \(path): \(message)" }
}

// MARK: - Writing

/// An object being written, leaving out members that hold their default.
struct DocumentWriter {
    private(set) var members: [String: TourValue] = [:]

    var value: TourValue { .object(members) }

    mutating func set(_ key: String, _ value: TourValue) { members[key] = value }
    mutating func set(_ key: String, _ text: String) { members[key] = .string(text) }
    mutating func set(_ key: String, _ number: Int) { members[key] = .int(number) }
    mutating func set(_ key: String, text: String?) { if let text { members[key] = .string(text) } }
    mutating func set(_ key: String, number: Double?) { if let number { members[key] = Self.number(number) } }
    mutating func set(_ key: String, flag: Bool) { if flag { members[key] = .bool(true) } }
    mutating func set(_ key: String, list: [TourValue]) { if !list.isEmpty { members[key] = .list(list) } }
    mutating func set(_ key: String, strings: [String]) { set(key, list: strings.map(TourValue.string)) }
    mutating func set(_ key: String, object: [String: TourValue]) {
        if !object.isEmpty { members[key] = .object(object) }
    }
    mutating func set(_ key: String, condition: Condition) {
        if condition != .always { members[key] = condition.documentValue }
    }

    /// A number as the document holds it: whole values as integers (what the JSON text would make of them).
    static func number(_ number: Double) -> TourValue {
        if let whole = Int(exactly: number) { return .int(whole) }
        return .double(number)
    }
}

/// A one-member object `{"tag": payload}`: the form of every choice with data (`{"request": "health"}`).
func tagged(_ tag: String, _ payload: TourValue) -> TourValue { .object([tag: payload]) }

// MARK: - Reading

/// An object being read: typed members with errors that name their path, members a reader never
/// asked for refused by ``finish()``.
struct DocumentReader {
    let path: String
    private let members: [String: TourValue]
    private var read: Set<String> = []

    init(_ value: TourValue, at path: String) throws(CatalogDocumentError) {
        guard case .object(let members) = value else {
            throw CatalogDocumentError(path: path, "expected an object, found \(Self.describe(value))")
        }
        self.members = members
        self.path = path
    }

    func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// A document's text as a value; text that is not JSON is refused at the document's root.
    static func json(_ text: String) throws(CatalogDocumentError) -> TourValue {
        do {
            return try TourValue(jsonText: text)
        } catch {
            throw CatalogDocumentError(path: "", "not JSON: \(error)")
        }
    }

    static func describe(_ value: TourValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .int, .double: "the number \(value.displayText)"
        case .string(let text): "the text \"\(text.count > 40 ? String(text.prefix(40)) + "…" : text)\""
        case .list: "a list"
        case .object: "an object"
        }
    }

    /// The member, or nil when it is missing (a null member is refused: the form leaves members out).
    mutating func optional(_ key: String) throws(CatalogDocumentError) -> TourValue? {
        read.insert(key)
        guard let value = members[key] else { return nil }
        if value == .null {
            throw CatalogDocumentError(path: path(key), "null is not allowed; leave the member out")
        }
        return value
    }

    /// A member whose value is any JSON value, null included (a field's initial value, a literal).
    mutating func anyValue(_ key: String) -> TourValue? {
        read.insert(key)
        return members[key]
    }

    mutating func required(_ key: String) throws(CatalogDocumentError) -> TourValue {
        guard let value = try optional(key) else {
            throw CatalogDocumentError(path: path, "missing '\(key)'")
        }
        return value
    }

    mutating func string(_ key: String) throws(CatalogDocumentError) -> String {
        try Self.string(required(key), at: path(key))
    }

    mutating func optionalString(_ key: String) throws(CatalogDocumentError) -> String? {
        guard let value = try optional(key) else { return nil }
        return try Self.string(value, at: path(key))
    }

    mutating func int(_ key: String) throws(CatalogDocumentError) -> Int {
        try Self.int(required(key), at: path(key))
    }

    mutating func optionalInt(_ key: String) throws(CatalogDocumentError) -> Int? {
        guard let value = try optional(key) else { return nil }
        return try Self.int(value, at: path(key))
    }

    mutating func optionalDouble(_ key: String) throws(CatalogDocumentError) -> Double? {
        guard let value = try optional(key) else { return nil }
        return try Self.double(value, at: path(key))
    }

    mutating func flag(_ key: String) throws(CatalogDocumentError) -> Bool {
        guard let value = try optional(key) else { return false }
        guard case .bool(let flag) = value else {
            throw CatalogDocumentError(
                path: path(key), "expected true or false, found \(Self.describe(value))")
        }
        return flag
    }

    /// A list member; empty when missing.
    mutating func list(_ key: String) throws(CatalogDocumentError) -> [TourValue] {
        guard let value = try optional(key) else { return [] }
        guard case .list(let items) = value else {
            throw CatalogDocumentError(path: path(key), "expected a list, found \(Self.describe(value))")
        }
        return items
    }

    mutating func strings(_ key: String) throws(CatalogDocumentError) -> [String] {
        let at = path(key)
        return try list(key).enumerated().map { index, item throws(CatalogDocumentError) in
            try Self.string(item, at: "\(at)[\(index)]")
        }
    }

    /// An object member; empty when missing.
    mutating func object(_ key: String) throws(CatalogDocumentError) -> [String: TourValue] {
        guard let value = try optional(key) else { return [:] }
        guard case .object(let members) = value else {
            throw CatalogDocumentError(path: path(key), "expected an object, found \(Self.describe(value))")
        }
        return members
    }

    /// An object of text values; empty when missing.
    mutating func stringMap(_ key: String) throws(CatalogDocumentError) -> [String: String] {
        let at = path(key)
        var result: [String: String] = [:]
        for (name, value) in try object(key) { result[name] = try Self.string(value, at: "\(at).\(name)") }
        return result
    }

    mutating func raw<T: RawRepresentable>(_ key: String, _ type: T.Type) throws(CatalogDocumentError) -> T
    where T.RawValue == String, T: CaseIterable {
        try Self.raw(required(key), type, at: path(key))
    }

    mutating func optionalRaw<T: RawRepresentable>(_ key: String, _ type: T.Type) throws(CatalogDocumentError)
        -> T?
    where T.RawValue == String, T: CaseIterable {
        guard let value = try optional(key) else { return nil }
        return try Self.raw(value, type, at: path(key))
    }

    mutating func condition(_ key: String) throws(CatalogDocumentError) -> Condition {
        guard let value = try optional(key) else { return .always }
        return try Condition(document: value, at: path(key))
    }

    /// Refuses members nobody read: a misspelt member must not be silently ignored.
    func finish() throws(CatalogDocumentError) {
        let unknown = Set(members.keys).subtracting(read).sorted()
        guard let first = unknown.first else { return }
        let known = read.sorted()
        let near = NameSuggestion.nearest(to: first, in: known).map { " (did you mean '\($0)'?)" } ?? ""
        throw CatalogDocumentError(
            path: path(first),
            "unknown member '\(first)'\(near); allowed here: \(known.joined(separator: ", "))")
    }

    static func string(_ value: TourValue, at path: String) throws(CatalogDocumentError) -> String {
        guard case .string(let text) = value else {
            throw CatalogDocumentError(path: path, "expected text, found \(describe(value))")
        }
        return text
    }

    static func int(_ value: TourValue, at path: String) throws(CatalogDocumentError) -> Int {
        guard case .int(let number) = value else {
            throw CatalogDocumentError(path: path, "expected a whole number, found \(describe(value))")
        }
        return number
    }

    static func double(_ value: TourValue, at path: String) throws(CatalogDocumentError) -> Double {
        switch value {
        case .int(let number): return Double(number)
        case .double(let number): return number
        default: throw CatalogDocumentError(path: path, "expected a number, found \(describe(value))")
        }
    }

    static func raw<T: RawRepresentable>(_ value: TourValue, _ type: T.Type, at path: String)
        throws(CatalogDocumentError) -> T
    where T.RawValue == String, T: CaseIterable {
        let text = try string(value, at: path)
        guard let result = T(rawValue: text) else {
            let names = T.allCases.map(\.rawValue)
            throw CatalogDocumentError(
                path: path, "'\(text.quotable)' is not one of \(names.joined(separator: ", "))")
        }
        return result
    }

    /// A choice: a bare name (`"advance"`), or a one-member object with its data (`{"request": "health"}`).
    static func tagged(_ value: TourValue, at path: String) throws(CatalogDocumentError) -> (
        tag: String, data: TourValue?
    ) {
        switch value {
        case .string(let tag): return (tag, nil)
        case .object(let members) where members.count == 1:
            let (tag, data) = members.first ?? ("", .null)
            return (tag, data)
        default:
            throw CatalogDocumentError(
                path: path, "expected a name or an object of one member, found \(describe(value))")
        }
    }

    /// The refusal of a choice this build does not know.
    static func unknown(_ tag: String, among names: [String], at path: String) -> CatalogDocumentError {
        let near = NameSuggestion.nearest(to: tag, in: names).map { " (did you mean '\($0)'?)" } ?? ""
        return CatalogDocumentError(
            path: path, "unknown '\(tag.quotable)'\(near); one of \(names.joined(separator: ", "))")
    }

    /// The data a choice needs.
    static func data(_ tagged: (tag: String, data: TourValue?), at path: String) throws(CatalogDocumentError)
        -> TourValue
    {
        guard let data = tagged.data else {
            throw CatalogDocumentError(
                path: path, "'\(tagged.tag)' needs its value: {\"\(tagged.tag)\": ...}")
        }
        return data
    }

    /// A choice without data written with some.
    static func none(_ tagged: (tag: String, data: TourValue?), at path: String) throws(CatalogDocumentError)
    {
        if tagged.data != nil {
            throw CatalogDocumentError(
                path: path, "'\(tagged.tag)' takes no value; write it as \"\(tagged.tag)\"")
        }
    }
}
