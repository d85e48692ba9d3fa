import TourCodec
import TourCore

/// The checks of a catalog's conditions, fields and effects against what its product declares.
extension CoherenceCheck {
    mutating func checkCondition(_ condition: Condition, _ place: Place, _ what: String) {
        for key in condition.contextKeys where !declared.contextKeys.contains(key) {
            add(
                .undeclaredContextKey, place,
                """
                \(what) reads '\(key)', which the handler does not declare\
                \(suggest(key, in: Array(declared.contextKeys)))
                """
            )
        }
        for id in condition.flowReferences where !flowIDs.contains(id) {
            add(.unknownFlow, place, "\(what) names flow '\(id)', which does not exist")
        }
    }

    mutating func checkFieldKinds(_ fields: [FieldSpec], _ place: Place) {
        for field in fields {
            let key: String?
            switch field.kind {
            case .integer(let minimum, let maximum, let maximumKey):
                key = maximumKey
                if let maximum, maximum < minimum {
                    add(
                        .emptyRange, place.item(field.name).at("kind"),
                        """
                        field '\(field.name)' takes a whole number from \(minimum) to \(maximum): \
                        no number is both
                        """
                    )
                }
            case .date(let latestKey): key = latestKey
            default: key = nil
            }
            if let key, !declared.contextKeys.contains(key) {
                add(
                    .undeclaredContextKey, place.item(field.name).at("kind"),
                    "field '\(field.name)' is bounded by '\(key)', which the handler does not declare")
            }
        }
    }

    /// Effects as the handler declares them: a kind it performs, payload keys it takes, required keys
    /// given, values of the declared kind; fields, parameters and context keys that exist.
    mutating func checkEffects(
        _ effects: [EffectTemplate], fields: [String: FieldSpec], parameters: [String: FieldSpec?],
        _ place: Place,
        _ what: String
    ) {
        for (index, effect) in effects.enumerated() {
            let at = place.item(String(index))
            switch effect {
            case .product(let name, let payload):
                let here = at.at("product")
                let sources = sourceKinds(
                    payload, fields: fields, parameters: parameters, here.at("payload"), what)
                guard let kind = declared.effect(name) else {
                    add(
                        .undeclaredEffect, here.at("name"),
                        """
                        \(what) sends product effect '\(name)', which the handler does not declare\
                        \(suggest(name, in: declared.effectNames)); it declares \
                        \(listing(declared.effectNames))
                        """
                    )
                    continue
                }
                for key in payload.keys.sorted() {
                    guard let spec = kind.payload[key] else {
                        add(
                            .unknownPayloadKey, here.at("payload").at(key),
                            """
                            \(what): effect '\(name)' takes no payload key '\(key)'\
                            \(suggest(key, in: Array(kind.payload.keys))); it takes \
                            \(listing(kind.payload.keys.sorted()))
                            """
                        )
                        continue
                    }
                    if let given = sources[key] ?? nil, !spec.kind.accepts(given) {
                        add(
                            .payloadKind, here.at("payload").at(key),
                            """
                            \(what): effect '\(name)' takes \(spec.kind.phrase) as '\(key)', \
                            and this gives \(given.phrase)
                            """
                        )
                    }
                }
                for (key, spec) in kind.payload.sorted(by: { $0.key < $1.key })
                where spec.required && payload[key] == nil {
                    add(
                        .missingPayloadKey, here.at("payload"),
                        "\(what): effect '\(name)' needs payload key '\(key)' (\(spec.kind.phrase))")
                }
            case .analytics(_, let properties):
                _ = sourceKinds(
                    properties, fields: fields, parameters: parameters, at.at("analytics.properties"), what)
            case .haptic: break
            }
        }
    }

    /// The kind each source gives (nil when any), checking that the fields, parameters and context keys it
    /// names exist.
    mutating func sourceKinds(
        _ values: [String: ValueSource], fields: [String: FieldSpec], parameters: [String: FieldSpec?],
        _ place: Place,
        _ what: String
    ) -> [String: ValueKind?] {
        var kinds: [String: ValueKind?] = [:]
        for (key, source) in values.sorted(by: { $0.key < $1.key }) {
            switch source {
            case .literal(let value): kinds[key] = ValueKind(of: value)
            case .now: kinds[key] = .number
            case .field(let name):
                if let field = fields[name] {
                    kinds[key] = field.kind.valueKind
                } else {
                    add(
                        .unknownField, place.at(key),
                        """
                        \(what) reads field '\(name)', which is not declared\
                        \(suggest(name, in: Array(fields.keys)))
                        """
                    )
                }
            case .parameter(let name):
                if let field = parameters[name] {
                    kinds[key] = field?.kind.valueKind
                } else {
                    add(
                        .unknownField, place.at(key),
                        parameters.isEmpty
                            ? "\(what) reads parameter '\(name)', but nothing here takes parameters"
                            : """
                            \(what) reads parameter '\(name)', which it does not take\
                            \(suggest(name, in: Array(parameters.keys))); it takes \
                            \(listing(parameters.keys.sorted()))
                            """
                    )
                }
            case .context(let name):
                if let declaredKey = declared.contextKey(name) {
                    kinds[key] = declaredKey.kind.valueKind
                } else {
                    add(
                        .undeclaredContextKey, place.at(key),
                        """
                        \(what) reads '\(name)', which the handler does not declare\
                        \(suggest(name, in: Array(declared.contextKeys)))
                        """
                    )
                }
            }
        }
        return kinds
    }
}
