/// A catalog's user-visible texts by stable id, the catalog in another locale, and what is wrong
/// with its translations.
extension TourCatalog {
    /// Every user-visible text of the catalog with its stable id, in catalog order, then the
    /// engine's own texts (``EngineText``) as this catalog's tables have them: what a translation
    /// table keys. Ids are built from ids that migrations keep stable:
    ///
    /// - `FLOW.name`; `FLOW.STEP.title`, `.body`, `.hint`, `.detail1`…;
    /// - `FLOW.STEP.action.ACTION.label` and `.refusal1`… (what a refused action tells the user);
    /// - `FLOW.STEP.gate.GATE.granted`, `.denied`, `.unavailable`; `FLOW.field.FIELD.rule`;
    /// - `action.ACTION.label` and `field.FIELD.rule` for the free actions and fields;
    /// - `progress.step`, `progress.finale`.
    public var sourceTexts: [(id: String, text: String)] {
        var texts: [(id: String, text: String)] = []
        var copy = self
        copy.forEachText { id, text in texts.append((id, text)) }
        return texts + EngineText.english
    }

    /// The catalog with its texts in `locale` where its tables have them (by the fallback chain,
    /// down to its own texts), everything else unchanged. Runs, fingerprints and the journal do not
    /// see the difference: only what a user reads changes. Plural forms then follow `locale`'s
    /// rules.
    public func localized(to locale: LocaleTag) -> TourCatalog {
        var catalog = self
        catalog.locale = strings.resolved(locale)
        guard catalog.locale != strings.source else { return catalog }
        catalog.forEachText { id, text in
            if let translation = strings.translation(of: id, for: locale) { text = translation }
        }
        return catalog
    }

    /// The catalog's own (source-language) text `id` (an id of ``sourceTexts``), or nil.
    public func text(_ id: String) -> String? {
        var copy = self
        var found: String?
        copy.forEachText { textID, text in if textID == id { found = text } }
        return found
    }

    /// Replaces the catalog's own text `id` (an id of ``sourceTexts`` other than the engine's);
    /// false when the catalog has no text with that id. Translations are left as they are (one made
    /// from the old text is then stale, as `translationProblems` says).
    public mutating func setText(_ id: String, to newText: String) -> Bool {
        var found = false
        forEachText { textID, text in
            if textID == id {
                text = newText
                found = true
            }
        }
        return found
    }

    /// An engine text (``EngineText``) in the catalog's locale.
    func engineText(_ id: String) -> String {
        let english = EngineText.english.first { $0.id == id }?.text ?? id
        guard let locale, locale != strings.source else { return english }
        return strings.translation(of: id, for: locale) ?? english
    }

    /// The plural rules of the locale the catalog's texts are in.
    var pluralRules: PluralRules { PluralRules(locale ?? strings.source) }

    /// Calls `body` with each user-visible text and its id, in catalog order; whatever `body` leaves
    /// in the text is kept.
    mutating func forEachText(_ body: (String, inout String) -> Void) {
        for flowIndex in flows.indices {
            let flow = flows[flowIndex].id.rawValue
            body("\(flow).name", &flows[flowIndex].name)
            for stepIndex in flows[flowIndex].steps.indices {
                let step = "\(flow).\(flows[flowIndex].steps[stepIndex].id.rawValue)"
                flows[flowIndex].steps[stepIndex].forEachText(prefix: step, body)
            }
            for fieldIndex in flows[flowIndex].fields.indices {
                let field = flows[flowIndex].fields[fieldIndex]
                body("\(flow).field.\(field.name).rule", &flows[flowIndex].fields[fieldIndex].ruleMessage)
            }
        }
        for index in freeActions.indices {
            freeActions[index].forEachText(prefix: "action.\(freeActions[index].name)", body)
        }
        for index in freeFields.indices {
            body("field.\(freeFields[index].name).rule", &freeFields[index].ruleMessage)
        }
    }
}

extension StepDefinition {
    fileprivate mutating func forEachText(prefix: String, _ body: (String, inout String) -> Void) {
        body("\(prefix).title", &content.title)
        body("\(prefix).body", &content.body)
        if var hint = content.hint {
            body("\(prefix).hint", &hint)
            content.hint = hint
        }
        for index in content.details.indices { body("\(prefix).detail\(index + 1)", &content.details[index]) }
        for index in actions.indices {
            actions[index].forEachText(prefix: "\(prefix).action.\(actions[index].name)", body)
        }
        for index in gates.indices {
            let gate = "\(prefix).gate.\(gates[index].id)"
            body("\(gate).granted", &gates[index].grantedMessage)
            body("\(gate).denied", &gates[index].deniedMessage)
            if var unavailable = gates[index].unavailableMessage {
                body("\(gate).unavailable", &unavailable)
                gates[index].unavailableMessage = unavailable
            }
        }
    }
}

extension StepAction {
    fileprivate mutating func forEachText(prefix: String, _ body: (String, inout String) -> Void) {
        if var text = label {
            body("\(prefix).label", &text)
            label = text
        }
        var number = 0
        for index in preconditions.indices {
            switch preconditions[index] {
            case .performed(let action, var message):
                number += 1
                body("\(prefix).refusal\(number)", &message)
                preconditions[index] = .performed(action, message: message)
            case .gate(let gate, let statuses, var message):
                number += 1
                body("\(prefix).refusal\(number)", &message)
                preconditions[index] = .gate(gate, in: statuses, message: message)
            case .condition(let condition, var message):
                number += 1
                body("\(prefix).refusal\(number)", &message)
                preconditions[index] = .condition(condition, message: message)
            case .fieldsValid, .requiredGatesGranted:
                break
            }
        }
    }
}
