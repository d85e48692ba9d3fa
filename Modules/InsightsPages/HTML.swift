/// The page being written: markup from this module's constants (``raw(_:)``) and values, always
/// escaped (``text(_:)``). Written by hand rather than with a template library: swift-mustache
/// imports Foundation, which would link Foundation and ICU into every product's CLI (`report
/// --html`), which must start fast (Performance.md, section 4); the pages are a few fixed shapes.
final class HTML {
    private(set) var output = ""

    @discardableResult
    func raw(_ markup: String) -> HTML {
        output += markup
        return self
    }

    @discardableResult
    func text(_ value: String) -> HTML {
        output += Self.escape(value)
        return self
    }

    /// Escapes the five characters that mean something in HTML text and attribute values.
    static func escape(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for character in value.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    static let css = """
        :root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#57606a;--bar:#2f6fdd;--line:#d0d7de;\
        --focus:#bf3989}
        @media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9da7b3;--bar:#5b9cff;\
        --line:#30363d}}
        *{box-sizing:border-box}\
        body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);\
        background:var(--bg)}
        header{display:flex;gap:1.5rem;align-items:center;padding:.75rem 1.5rem;\
        border-bottom:1px solid var(--line);flex-wrap:wrap}
        .brand{font-weight:600}nav a{margin-right:1rem}a{color:var(--bar)}\
        a[aria-current]{font-weight:600;color:var(--fg)}
        main{padding:1rem 1.5rem 2rem;max-width:1280px}h1{font-size:1.5rem;margin:.5rem 0}\
        h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
        .subtitle,footer{color:var(--muted)}footer{padding:1rem 1.5rem;border-top:1px solid var(--line)}
        .pair{display:flex;gap:2rem;flex-wrap:wrap;align-items:flex-start}svg{max-width:100%;height:auto}
        svg .label,svg .value{font-size:12px;fill:var(--fg)}svg .end{text-anchor:end}svg .bar{fill:var(--bar)}
        svg .axis{stroke:var(--line)}svg polyline{fill:none;stroke:var(--bar);stroke-width:2}\
        svg .completed{stroke-dasharray:5 4}
        svg .interval{stroke:var(--fg);stroke-width:2}svg .middle{text-anchor:middle}\
        svg .started{stroke:var(--bar);stroke-width:2;fill:none}
        svg .band{fill:var(--bar);fill-opacity:.18;stroke:none}svg .point{fill:var(--bar)}
        .g0{fill:#2f6fdd}.g1{fill:#bc4c00}.g2{fill:#1a7f37}.g3{fill:#8250df}.g4{fill:#cf222e}.g5{fill:#6e7781}
        @media (prefers-color-scheme:dark){.g0{fill:#5b9cff}.g1{fill:#ffa657}.g2{fill:#56d364}\
        .g3{fill:#d2a8ff}.g4{fill:#ff7b72}.g5{fill:#9da7b3}}
        .legend{list-style:none;padding:0;margin:.25rem 0;display:flex;gap:1.25rem;flex-wrap:wrap}\
        .legend svg{vertical-align:middle}
        .note{color:var(--muted);max-width:70rem}\
        .notice{border-left:4px solid var(--focus);padding:.25rem .75rem;max-width:70rem}\
        nav.choices{margin:.25rem 0 .5rem}nav.choices a{margin-right:.75rem}\
        nav.choices a[aria-current]{font-weight:600;color:var(--fg)}
        table{border-collapse:collapse;margin:.25rem 0}\
        caption{text-align:left;font-weight:600;padding:.25rem 0}
        th,td{border-bottom:1px solid var(--line);padding:.25rem .6rem;text-align:left}\
        .n{text-align:right;font-variant-numeric:tabular-nums}
        .skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--bg);padding:.5rem}
        a:focus-visible,button:focus-visible,input:focus-visible,main:focus-visible{\
        outline:3px solid var(--focus);outline-offset:2px}
        form.filter{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap;margin:1rem 0}\
        input{font:inherit;padding:.2rem .4rem}
        button{font:inherit;padding:.25rem .8rem;cursor:pointer}.sign-out{margin-left:auto}
        .field{margin:.5rem 0;max-width:48rem}\
        fieldset.text{border:1px solid var(--line);margin:.75rem 0;padding:.25rem .75rem}
        .locales{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:0 1rem}\
        .field label{display:block;font-weight:600}textarea{font:inherit;width:100%;padding:.3rem .4rem}
        .problem{color:#b3261e;margin:.2rem 0}@media (prefers-color-scheme:dark){.problem{color:#ff938a}}
        textarea[aria-invalid]{border:2px solid #b3261e}\
        textarea:focus-visible,select:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
        .device{width:24rem;max-width:100%;border:10px solid var(--fg);border-radius:2rem;\
        padding:1.5rem 1.25rem;margin:.5rem 0}
        .device .progress{color:var(--muted);margin:0}\
        .device .card-title{font-size:1.4em;font-weight:700;margin:.4rem 0}
        .device .hint{color:var(--muted)}\
        .device .action{display:block;border:1px solid var(--bar);border-radius:.6rem;padding:.5rem;\
        margin:.5rem 0;text-align:center}
        \(InsightsPage.textSizeRules)
        """
}
