import CatalogDocuments
import Foundation
import Testing
import TourFixtures

@Suite("Catalog check")
struct CatalogCheckTests {
    /// A catalog with one seeded mistake of every kind the check knows.
    static let broken = TourCatalog(
        app: "broken",
        flows: [
            FlowDefinition(
                "main", name: "Main",
                steps: [
                    StepDefinition(
                        "welcome", StepContent(title: "Welcome", body: "Hi"),
                        actions: [
                            .next(),
                            // A misspelt field, and an effect the handler does not declare.
                            StepAction(
                                "save", fills: ["nmae"], outcome: .stay,
                                effects: [.product("storeNmae", payload: ["name": .field("name")])]),
                            // A misspelt payload key (so the required one is missing), and a value of
                            // the wrong kind.
                            StepAction(
                                "store", outcome: .stay,
                                effects: [
                                    .product("storeName", payload: ["nmae": .literal("x")]),
                                    .product("storeName", payload: ["name": .literal(3)]),
                                ]),
                            // A gate the step does not have; needs an action the step does not have.
                            StepAction(
                                "grant", outcome: .request(gate: "camra"),
                                preconditions: [.performed("press", message: "press first")]),
                        ],
                        // A free action that does not exist, a flow that does not exist.
                        passThrough: ["setBirthDat"], covers: ["tipz"]),
                    // The same id twice.
                    StepDefinition(
                        "welcome", StepContent(title: "Again", body: "Twice"), actions: [.next()]),
                    // Nothing moves the user on: a dead end, and the step after it is unreachable.
                    StepDefinition(
                        "stuck", StepContent(title: "Stuck", body: "No way on"),
                        actions: [StepAction("look", outcome: .stay)],
                        // A context key the handler does not declare.
                        includedWhen: .flag("hasHeadphones")),
                    StepDefinition(
                        "after", StepContent(title: "After", body: "Never seen"), actions: [.next()]),
                    StepDefinition(
                        "connect", StepContent(title: "Connect", body: "Sign in"),
                        actions: [.next()],
                        gates: [
                            // Required, but no action requests it; asks for a request nobody performs.
                            Gate(
                                "account", .request("connectt"), required: true, deniedMessage: "No",
                                grantedMessage: "Yes")
                        ],
                        // A condition nothing can make true: never shown.
                        includedWhen: .all([.flag("hasPhases"), .not(.flag("hasPhases"))])),
                ],
                // A whole number from 5 to 1: none.
                fields: [
                    FieldSpec("name", .text),
                    FieldSpec("count", .integer(minimum: 5, maximum: 1, maximumKey: nil)),
                ],
                // A variant showing a step the flow does not have.
                experiment: Experiment(
                    "shorter",
                    variants: [
                        .init("full", weight: 1), .init("short", weight: 1, shows: .steps(["welcom"])),
                    ]))
        ],
        freeActions: [StepAction("setBirthDate", outcome: .stay)])

    static let declared = CatalogDeclarations(
        context: [.computed("hasPhases", .flag, default: false, "phases stored")],
        effects: [EffectKind("storeName", payload: ["name": .text])], requests: ["connect"])

    @Test func everyKindOfSeededMistakeIsFound() {
        let problems = Self.broken.problems(declaring: Self.declared)
        let found = Set(problems.map(\.kind))
        let all = Set(CatalogProblem.Kind.coherence)
        #expect(found == all, "missing: \(all.subtracting(found)), extra: \(found.subtracting(all))")
        func has(_ kind: CatalogProblem.Kind, _ step: StepID?, _ words: String) -> Bool {
            problems.contains { $0.kind == kind && $0.step == step && $0.detail.contains(words) }
        }
        #expect(has(.unknownField, "welcome", "'nmae'"))
        #expect(has(.undeclaredEffect, "welcome", "'storeNmae'"))
        #expect(has(.unknownGate, "welcome", "'camra'"))
        #expect(has(.unknownAction, "welcome", "'press'"))
        #expect(has(.unknownPassThrough, "welcome", "'setBirthDat'"))
        #expect(has(.unknownFlow, "welcome", "'tipz'"))
        #expect(has(.duplicateID, nil, "step id welcome"))
        #expect(has(.deadEnd, "stuck", "nothing moves the user on"))
        #expect(has(.unreachableStep, "after", "never shows"))
        #expect(has(.undeclaredContextKey, "stuck", "'hasHeadphones'"))
        #expect(has(.unrequestableGate, "connect", "gate account"))
        #expect(has(.undeclaredRequest, "connect", "'connectt'"))
        #expect(has(.undeclaredEffect, "welcome", "(did you mean 'storeName'?)"))
        #expect(has(.unknownPayloadKey, "welcome", "takes no payload key 'nmae' (did you mean 'name'?)"))
        #expect(has(.missingPayloadKey, "welcome", "needs payload key 'name'"))
        #expect(has(.payloadKind, "welcome", "takes text as 'name', and this gives a number"))
        #expect(has(.neverShown, "connect", "step connect of main is never shown"))
        #expect(has(.emptyRange, nil, "field 'count' takes a whole number from 5 to 1"))
        #expect(
            has(
                .experiment, nil,
                "shows step 'welcom', which the flow does not have (did you mean 'welcome'?)"))
        // Each names its path in the catalog document.
        let paths = problems.map(\.path)
        #expect(
            paths.contains("flows[main].steps[welcome].actions[store].effects[0].product.payload.nmae"),
            "\(paths)")
        #expect(
            paths.contains("flows[main].steps[welcome].actions[save].effects[0].product.name"), "\(paths)")
        #expect(
            paths.contains("flows[main].steps[welcome].actions[store].effects[1].product.payload.name"),
            "\(paths)")
        #expect(paths.contains("flows[main].steps[stuck].includedWhen"), "\(paths)")
        // Each problem names its place in its description.
        #expect(problems.allSatisfy { $0.description.hasPrefix($0.kind.rawValue) })
    }

    @Test func aCoherentCatalogHasNoProblems() {
        let catalog = Fixtures.catalog()
        let declared = CatalogDeclarations(
            context: [
                .computed("hasItems", .flag, default: false, "items stored"),
                .computed("filledCount", .number, default: 0, "weeks filled"),
                .computed("weeks", .number, default: 0, "weeks lived"),
                .computed("hasConnectedService", .flag, default: false, "connected"),
            ],
            effects: FixtureEffect.kinds,
            requests: ["connect"])
        let problems = catalog.problems(declaring: declared)
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func deviceFactsAreCheckedAgainstTheirDeclaration() throws {
        let declared = CatalogDeclarations(context: [
            .computed("hasPhases", .flag, default: false, "phases stored"),
            .device("online", .flag, default: true, "network"),
            .device("volume", .number, default: 5, "volume"),
        ])
        #expect(
            try declared.deviceFacts([("online", "false"), ("volume", "7")]) == [
                "online": false, "volume": 7,
            ])
        #expect(throws: DeclarationError.self) { try declared.deviceFacts([("onlin", "true")]) }
        #expect(throws: DeclarationError.self) { try declared.deviceFacts([("hasPhases", "true")]) }
        #expect(throws: DeclarationError.self) { try declared.deviceFacts([("volume", "loud")]) }
        do {
            _ = try declared.deviceFacts([("onlin", "true")])
        } catch {
            #expect(error.description.contains("did you mean 'online'"))
            #expect(error.description.contains("online (true or false), volume (a whole number)"))
        }
    }
    /// A step or trigger is never shown when no value of the device facts it reads (over their
    /// declared range), and no state of anything else, makes its condition true; one that some
    /// value makes true is fine, and the explorer walks those values (`ContextReach`).
    @Test func aConditionNoContextValueMakesTrueIsNeverShown() throws {
        let declared = CatalogDeclarations(context: [
            .device("hasWatch", .flag, default: false, "a watch is paired"),
            .device("watches", .number, default: 0, range: 0...4, "paired watches"),
            .computed("hasPhases", .flag, default: false, "phases stored"),
        ])
        let canHold = { (condition: Condition) in ContextReach.canHold(condition, declarations: declared) }
        #expect(canHold(.flag("hasWatch")))
        #expect(canHold(.all([.flag("hasWatch"), .atLeast("watches", 4)])))
        #expect(canHold(.all([.not(.flag("hasWatch")), .flowCompleted("intro"), .not(.flag("hasPhases"))])))
        #expect(!canHold(.all([.flag("hasWatch"), .not(.flag("hasWatch"))])))
        #expect(!canHold(.atLeast("watches", 5)), "beyond the declared range")
        #expect(!canHold(.all([.atLeast("watches", 3), .not(.atLeast("watches", 2))])))
        #expect(!canHold(.never))
        let variables = ContextReach.deviceVariables(
            of: TourCatalog(
                app: "watchy",
                flows: [
                    FlowDefinition(
                        "welcome", name: "Welcome",
                        steps: [
                            StepDefinition("hello", StepContent(title: "Hi", body: "Hi"), actions: [.next()]),
                            StepDefinition(
                                "pair", StepContent(title: "Pair", body: "Pair"), actions: [.next()],
                                includedWhen: .any([.flag("hasWatch"), .atLeast("watches", 2)])),
                        ], triggers: [Trigger(.launch)])
                ]), declarations: declared)
        #expect(variables.map(\.key) == ["hasWatch", "watches"])
        #expect(variables.first?.values == [false, true])
        #expect(
            variables.last?.values == [0, 1, 2, 4], "the default, each side of the threshold, the bounds")
        // A device number outside its declared range is refused as the app reports it.
        #expect(throws: DeclarationError.self) { try declared.deviceFacts([("watches", "9")]) }
        #expect(try declared.deviceFacts([("watches", "4")]) == ["watches": 4])
    }
}
