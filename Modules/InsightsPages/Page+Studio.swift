/// The studio's sections: a form of texts with each problem beside its field, and a card
/// as a device shows it.
extension InsightsPage {
    /// A POST form of texts (one per text and locale), each with what is wrong with it beside it.
    public struct TextEditor: Sendable, Equatable {
        public struct Field: Sendable, Equatable {
            public var name: String
            public var label: String
            public var value: String
            /// The BCP 47 tag of the text's language (the field's `lang`).
            public var language: String
            /// What is wrong with it (a missing translation, a check's problem), shown beside it.
            public var problem: String?
            /// The text it is one locale of ("title", "action next"): consecutive fields of one
            /// group are shown side by side under it, one column a locale.
            public var group: String

            public init(
                name: String, label: String, value: String, language: String, problem: String? = nil,
                group: String = ""
            ) {
                self.name = name
                self.label = label
                self.value = value
                self.language = language
                self.problem = problem
                self.group = group
            }
        }

        public var heading: String
        public var action: String
        /// Hidden fields (the anti-forgery token, the revision the form was made from).
        public var hidden: [(name: String, value: String)]
        public var fields: [Field]
        /// Problems of the step that belong to no one field.
        public var problems: [String]
        public var links: [Link]
        public var submit: String

        public init(
            heading: String, action: String, hidden: [(name: String, value: String)], fields: [Field],
            problems: [String],
            links: [Link], submit: String
        ) {
            self.heading = heading
            self.action = action
            self.hidden = hidden
            self.fields = fields
            self.problems = problems
            self.links = links
            self.submit = submit
        }

        public static func == (lhs: TextEditor, rhs: TextEditor) -> Bool {
            lhs.heading == rhs.heading && lhs.action == rhs.action
                && lhs.hidden.map(\.name) == rhs.hidden.map(\.name)
                && lhs.hidden.map(\.value) == rhs.hidden.map(\.value) && lhs.fields == rhs.fields
                && lhs.problems == rhs.problems && lhs.links == rhs.links && lhs.submit == rhs.submit
        }
    }

    /// A card as the engine made it, drawn as a device shows it, with what VoiceOver reads.
    public struct CardPreview: Sendable, Equatable {
        public var heading: String
        public var language: String
        /// `default`, `large`, `xLarge`, `xxLarge`, `xxxLarge` or an accessibility size: the text scale.
        public var textSize: String
        public var progress: String?
        public var title: String
        public var body: String
        public var details: [String]
        public var hint: String?
        /// Each action's label, linked to the walk onward.
        public var actions: [Link]
        /// What VoiceOver reads, in order (shown when VoiceOver is on).
        public var spoken: [String]
        /// Notes under the device: a refused action, the end of the flow, the settings applied.
        public var notes: [String]

        public init(
            heading: String, language: String, textSize: String, progress: String?, title: String,
            body: String,
            details: [String], hint: String?, actions: [Link], spoken: [String], notes: [String]
        ) {
            self.heading = heading
            self.language = language
            self.textSize = textSize
            self.progress = progress
            self.title = title
            self.body = body
            self.details = details
            self.hint = hint
            self.actions = actions
            self.spoken = spoken
            self.notes = notes
        }
    }

    /// iOS's text sizes (Dynamic Type) and the scale of the body text at each (large = 1).
    public static let textSizes: [(name: String, scale: Double)] = [
        ("xSmall", 0.82), ("small", 0.88), ("medium", 0.94), ("large", 1), ("xLarge", 1.12),
        ("xxLarge", 1.24),
        ("xxxLarge", 1.35), ("accessibilityMedium", 1.64), ("accessibilityLarge", 1.94),
        ("accessibilityExtraLarge", 2.35),
        ("accessibilityExtraExtraLarge", 2.76), ("accessibilityExtraExtraExtraLarge", 3.12),
    ]

    /// The style sheet's rule per text size (no inline style: the page's policy allows only its
    /// own style sheet).
    static var textSizeRules: String {
        textSizes.map { ".device[data-text-size=\($0.name)]{font-size:\(Int(($0.scale * 100).rounded()))%}" }
            .joined()
    }

    static func renderEditor(_ editor: TextEditor, id: String, into html: HTML) {
        html.raw("<section class=\"editor\" id=\"editor\" aria-labelledby=\"\(id)\">\n<h2 id=\"\(id)\">")
            .text(editor.heading).raw("</h2>\n")
        if !editor.links.isEmpty {
            html.raw("<p class=\"links\">")
            for link in editor.links {
                html.raw("<a href=\"").text(link.href).raw("\">").text(link.label).raw("</a> ")
            }
            html.raw("</p>\n")
        }
        for problem in editor.problems {
            html.raw("<p class=\"problem\" role=\"alert\">").text(problem).raw("</p>\n")
        }
        html.raw("<form method=\"post\" action=\"").text(editor.action).raw("\">\n")
        for field in editor.hidden {
            html.raw("<input type=\"hidden\" name=\"").text(field.name).raw("\" value=\"").text(field.value)
                .raw("\">")
        }
        var openGroup: String?
        for (index, field) in editor.fields.enumerated() {
            let fieldID = "\(id)-f\(index)"
            if field.group != openGroup {
                if openGroup != nil { html.raw("</div></fieldset>\n") }
                openGroup = field.group
                html.raw("<fieldset class=\"text\"><legend>").text(field.group).raw(
                    "</legend><div class=\"locales\">\n")
            }
            html.raw("<div class=\"field\"><label for=\"\(fieldID)\">").text(field.label).raw("</label>")
            html.raw("<textarea id=\"\(fieldID)\" name=\"").text(field.name).raw("\" lang=\"").text(
                field.language
            )
            .raw("\" rows=\"2\"").raw(
                field.problem == nil ? "" : " aria-describedby=\"\(fieldID)-p\" aria-invalid=\"true\""
            )
            .raw(">").text(field.value).raw("</textarea>")
            if let problem = field.problem {
                html.raw("<p class=\"problem\" id=\"\(fieldID)-p\">").text(problem).raw("</p>")
            }
            html.raw("</div>\n")
        }
        if openGroup != nil { html.raw("</div></fieldset>\n") }
        html.raw("<button type=\"submit\">").text(editor.submit).raw("</button></form>\n</section>\n")
    }

    static func renderCard(_ card: CardPreview, id: String, into html: HTML) {
        html.raw("<section class=\"preview\" aria-labelledby=\"\(id)\">\n<h2 id=\"\(id)\">").text(
            card.heading
        ).raw("</h2>\n")
        html.raw("<div class=\"device\" role=\"group\" aria-label=\"The card as a device shows it\" lang=\"")
            .text(card.language)
            .raw("\" data-text-size=\"").text(card.textSize).raw("\">\n")
        if let progress = card.progress {
            html.raw("<p class=\"progress\" data-field=\"progress\">").text(progress).raw("</p>\n")
        }
        html.raw("<p class=\"card-title\" data-field=\"title\">").text(card.title).raw("</p>\n")
        if !card.body.isEmpty { html.raw("<p data-field=\"body\">").text(card.body).raw("</p>\n") }
        if !card.details.isEmpty {
            html.raw("<ul>")
            for detail in card.details { html.raw("<li>").text(detail).raw("</li>") }
            html.raw("</ul>\n")
        }
        if let hint = card.hint {
            html.raw("<p class=\"hint\" data-field=\"hint\">").text(hint).raw("</p>\n")
        }
        for action in card.actions {
            html.raw("<a class=\"action\" href=\"").text(action.href).raw("\">").text(action.label).raw(
                "</a>\n")
        }
        html.raw("</div>\n")
        if !card.spoken.isEmpty {
            html.raw("<h3>What VoiceOver reads</h3>\n<ol class=\"spoken\">")
            for line in card.spoken { html.raw("<li>").text(line).raw("</li>") }
            html.raw("</ol>\n")
        }
        for note in card.notes { html.raw("<p class=\"note\">").text(note).raw("</p>\n") }
        html.raw("</section>\n")
    }
}
