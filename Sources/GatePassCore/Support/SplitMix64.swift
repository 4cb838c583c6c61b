/// SplitMix64 (Steele, Lea and Flood): a small, fast random stream that repeats from its
/// seed, so generated test data, the scanner's corpus and the bench's frames are the same on
/// every run and a failure can be replayed. Never for anything secret: ids, tokens, codes and
/// keys come from the system's generator.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    @usableFromInline var state: UInt64

    public init(seed: UInt64) { state = seed }

    @inlinable
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `low..<high`, from the top 53 bits of one draw.
    @inlinable
    public mutating func uniform(_ low: Double, _ high: Double) -> Double {
        low + (high - low) * Double(next() >> 11) / Double(1 << 53)
    }
}
