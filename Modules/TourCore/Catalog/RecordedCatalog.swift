/// One catalog document a product recorded when it shipped a version: its file name
/// (`<version>.json`) and its text, byte for byte (compiled into the product; CatalogDocuments
/// reads it as a document and holds the history).
public struct RecordedCatalog: Sendable, Equatable {
    public var file: String
    public var text: String

    public init(file: String, text: String) {
        self.file = file
        self.text = text
    }
}
