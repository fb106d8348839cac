/// The decoder's state before each of a run of consecutive MCUs, compactly (a bit position and 16-bit DC
/// predictions per MCU, about 14 bytes), as a speculative decode from a guessed start records it: MCUs are counted
/// from the run's first, and the predictions are off by a constant per component until the run is joined to
/// the one before it (`SpeculativeIndexBuild`).
struct MCUTrace {
    let components: Int
    /// Per MCU, the file bit (byte offset * 8 + bits of it read) its data starts at; -1 where the reader held
    /// whole buffers (near a marker or a chunk's start), whose snapshot is in `whole`.
    private(set) var bits: [Int] = []
    private(set) var predictions: [Int16] = []
    private(set) var whole: [Int: JPEGEntropyReader.Snapshot] = [:]

    init(components: Int) { self.components = components }

    var count: Int { bits.count }

    mutating func append(snapshot: JPEGEntropyReader.Snapshot, bit: Int, predictions: SIMD4<Int>) {
        if bit < 0 { whole[bits.count] = snapshot }
        bits.append(bit)
        for component in 0..<components { self.predictions.append(Int16(truncatingIfNeeded: predictions[component])) }
    }

    /// MCU `index`'s DC predictions plus `correction`.
    func predictions(_ index: Int, plus correction: SIMD4<Int16>) -> SIMD4<Int16> {
        var result = correction
        for component in 0..<components { result[component] &+= predictions[index * components + component] }
        return result
    }

    /// MCU `index`'s reader state.
    func snapshot(_ index: Int) -> JPEGEntropyReader.Snapshot {
        let bit = bits[index]
        return bit >= 0 ? JPEGEntropyReader.Snapshot(offset: bit / 8, skip: bit % 8) : whole[index]!
    }

    /// Drops everything traced, for a new guess.
    mutating func removeAll() {
        bits.removeAll(keepingCapacity: true)
        predictions.removeAll(keepingCapacity: true)
        whole.removeAll()
    }
}
