import TourCodec
import TourCore

/// Deterministic JSON for stored values: sorted keys, so equal values are equal bytes. Every stored
/// type writes its form by hand as a ``TourValue`` (``TourValueConvertible``); the text is the one
/// `JSONEncoder` with `.sortedKeys` and `.withoutEscapingSlashes` wrote until 0.8
/// (`StoredFormCorpusTests`).
enum JSONCoding {
    static func text<T: TourValueConvertible>(_ value: T) throws -> String { try value.tourValue.jsonText() }
    static func text(_ value: TourValue) throws -> String { try value.jsonText() }
    /// The forms every event writes, straight to text (``JSONTextWritable``: the same text).
    static func stored<T: JSONTextWritable>(_ value: T) throws -> String { try value.writtenJSONText() }
    static func text(_ values: [String: TourValue]) throws -> String {
        try TourValue.object(values).jsonText()
    }
    static func text<T: TourValueConvertible>(_ values: [T]) throws -> String {
        try values.tourValue.jsonText()
    }
    static func text<T: TourValueConvertible>(_ values: [String: T]) throws -> String {
        try TourValue.object(values.mapValues({ $0.tourValue })).jsonText()
    }

    static func value<T: TourValueConvertible>(_ type: T.Type, from text: String) throws -> T {
        try T(jsonText: text)
    }

    static func value(from text: String) throws -> TourValue { try TourValue(jsonText: text) }

    static func object(from text: String) throws -> [String: TourValue] {
        guard case .object(let object) = try TourValue(jsonText: text) else {
            throw StorageError("a stored object is not a JSON object: \(text.prefix(60))")
        }
        return object
    }
}
