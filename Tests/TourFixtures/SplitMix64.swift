/// A small seeded generator (SplitMix64), so a failing random sequence can be replayed: the test
/// targets' random cases take their seed from here.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// One of `choices`, at random.
    public mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int.random(in: 0..<choices.count, using: &self)]
    }
}

extension Collection {
    /// One of the elements, drawn with `generator`: `randomElement(using:)` for the tests' own lists,
    /// which are never empty.
    public func anyElement<Generator: RandomNumberGenerator>(using generator: inout Generator) -> Element {
        precondition(!isEmpty, "anyElement(using:) of an empty collection")
        return self[index(startIndex, offsetBy: Int.random(in: 0..<count, using: &generator))]
    }
}
