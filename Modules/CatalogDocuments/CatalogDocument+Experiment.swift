import TourCodec
import TourCore

/// A flow's experiment in its catalog document (format 2):
///
///     "experiment": {"id": "shortTour", "control": "full", "goal": "completion",
///                    "variants": [{"name": "full", "weight": 45},
///                                 {"name": "short", "weight": 45, "steps": ["welcome", "done"]},
///                                 {"name": "holdout", "weight": 10, "holdout": true}]}
///
/// `goal` is `"completion"` or `{"effect": "storePhase"}`.
extension Experiment {
    var documentValue: TourValue {
        var writer = DocumentWriter()
        writer.set("id", id)
        writer.set("control", control)
        switch goal {
        case .completion: writer.set("goal", "completion")
        case .effect(let name): writer.set("goal", tagged("effect", .string(name)))
        }
        writer.set(
            "variants",
            .list(
                variants.map { variant in
                    var item = DocumentWriter()
                    item.set("name", variant.name)
                    item.set("weight", variant.weight)
                    switch variant.shows {
                    case .allSteps: break
                    case .steps(let steps): item.set("steps", .strings(steps.map(\.rawValue)))
                    case .nothing: item.set("holdout", flag: true)
                    }
                    return item.value
                }))
        return writer.value
    }

    init(document value: TourValue, at path: String) throws(CatalogDocumentError) {
        var reader = try DocumentReader(value, at: path)
        let id = try reader.string("id")
        let control = try reader.string("control")
        let goalPath = reader.path("goal")
        let tagged = try DocumentReader.tagged(try reader.required("goal"), at: goalPath)
        let goal: Goal
        switch tagged.tag {
        case "completion":
            try DocumentReader.none(tagged, at: goalPath)
            goal = .completion
        case "effect":
            goal = .effect(
                try DocumentReader.string(
                    try DocumentReader.data(tagged, at: goalPath), at: goalPath + ".effect"))
        default:
            throw DocumentReader.unknown(tagged.tag, among: ["completion", "effect"], at: goalPath)
        }
        let variants = try reader.list("variants").enumerated().map {
            index, item throws(CatalogDocumentError) in
            var variant = try DocumentReader(item, at: "\(path).variants[\(index)]")
            let name = try variant.string("name")
            let weight = try variant.int("weight")
            let holdout = try variant.flag("holdout")
            let steps = try variant.optional("steps") == nil ? nil : try variant.strings("steps")
            try variant.finish()
            if holdout, steps != nil {
                throw CatalogDocumentError(
                    path: "\(path).variants[\(index)]", "a holdout shows nothing, so it lists no steps")
            }
            return Variant(
                name, weight: weight,
                shows: holdout ? .nothing : steps.map { .steps($0.map(StepID.init(rawValue:))) } ?? .allSteps)
        }
        try reader.finish()
        self.init(id, variants: variants, control: control, goal: goal)
    }
}
