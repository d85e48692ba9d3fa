/// A command refused for what is true of the world (a file, a key, the environment, the
/// database), not for how it was typed: one line on standard error and exit status 1, without the
/// usage text swift-argument-parser prints after a `ValidationError` (status 64), which would say
/// the command was mistyped when it was not.
struct Refusal: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
