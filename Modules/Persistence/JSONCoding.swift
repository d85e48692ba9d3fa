import TourCore

/// Deterministic JSON for stored values: sorted keys and dates as seconds since 1970, so equal values
/// are equal bytes. Written and read through ``TourValue`` (`TourValueEncoder`, `TourValueDecoder`),
/// the same text `JSONEncoder` with `.sortedKeys` and `.withoutEscapingSlashes` wrote until 0.8.
enum JSONCoding {
    static func string<T: Encodable>(_ value: T) throws -> String {
        try TourValueEncoder().jsonText(value)
    }

    static func value<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try TourValueDecoder().decode(type, jsonText: text)
    }
}
