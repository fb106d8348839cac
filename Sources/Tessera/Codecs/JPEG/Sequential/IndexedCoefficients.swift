/// A sequential JPEG's coefficients read through its entropy index, for `BandedJPEGDecoder`: each MCU row of a
/// window's columns is decoded from the state saved nearest before its first column (or, when nearer, from where
/// the last row's decoding stopped), so a region costs its own MCUs and at most a stride more per row.
final class IndexedCoefficients: BandCoefficients {
    private let decoder: SequentialCoefficientDecoder
    private let index: JPEGEntropyIndex
    private let name: String

    /// Reads the scan `scans` found in `input` from `index`, which describes it, for a decode at 1/`scale`.
    init(scans: JPEGScanIndex, index: JPEGEntropyIndex, input: ImageInput, scale: Int) throws {
        decoder = try SequentialCoefficientDecoder(index: scans, input: input,
                                                   dcOnly: JPEGEighthScale.dcOnly(scans.frame, scale: scale))
        self.index = index
        name = input.name
    }

    /// Saved states reach any MCU.
    var decodesInOrder: Bool { false }

    /// A sequential scan gives each block whole.
    var writesWholeBlocks: Bool { true }

    func decode(rows: Range<Int>, into window: CoefficientWindow) throws {
        for row in rows {
            let first = row * index.mcusAcross + window.columns.lowerBound
            guard let (state, position) = index.state(row: row, column: window.columns.lowerBound) else {
                throw TesseraError.corrupt(path: name, detail: "its entropy index is malformed at MCU row \(row.grouped)"
                                           + " (remove it from the cache folder to have it built again)")
            }
            if !(position...first).contains(decoder.position) { decoder.resume(at: state, position: position) }
            try decoder.decode(through: row * index.mcusAcross + window.columns.upperBound, into: window)
        }
    }
}
