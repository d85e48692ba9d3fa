/// What a translator's tool does to an exported XLIFF file, for the tests that send one out and
/// take it back: every empty target filled (`prefix` and the source text, placeholders and plural
/// forms kept), every segment marked translated.
public enum TranslationTool {
    public static func fill(_ xliff: String, prefix: String) -> String {
        xliff.replacing(#/(<source>((?s:.*?))</source>)(\n +</segment>)/#) { match in
            "\(match.output.1)\n        <target>\(prefix)\(match.output.2)</target>\(match.output.3)"
        }
        .replacing(#"<segment state="initial">"#, with: #"<segment state="translated">"#)
    }
}
