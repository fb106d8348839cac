/// A sequential JPEG's coefficients decoded in order from the scan's start, for `BandedJPEGDecoder`, recording
/// the entropy index's states on the way: a whole read with no index to use (at 1/8, on too few cores for
/// speculative decoding to pay) pays one pass and leaves the index for every later read of the file. Once the
/// last MCU row is decoded the index is written to `file` in `folder`; a folder that cannot be written leaves the
/// read as it is, with no index.
final class RecordingCoefficients: BandCoefficients {
    private let decoder: SequentialCoefficientDecoder
    private let scans: JPEGScanIndex
    private let key: JPEGEntropyIndex.Key
    private let stride: Int
    private var states: [JPEGScanState.Resumable] = []
    private let file: String
    private let folder: String
    private let name: String

    /// Reads the scan `scans` found in `input` (the file whose key is `key`) for a decode at 1/`scale`, to leave
    /// its index at `file` in `folder`.
    init(scans: JPEGScanIndex, input: ImageInput, scale: Int, key: JPEGEntropyIndex.Key, file: String,
         folder: String) throws {
        decoder = try SequentialCoefficientDecoder(index: scans, input: input,
                                                   dcOnly: JPEGEighthScale.dcOnly(scans.frame, scale: scale))
        self.scans = scans
        self.key = key
        self.file = file
        self.folder = folder
        name = input.name
        stride = JPEGEntropyIndex.firstStride(scans.frame, fileSize: key.size)
        states.reserveCapacity(JPEGEntropyIndex.stateCount(scans.frame, stride: stride))
    }

    /// Every MCU row is decoded, in order: the states are recorded from the scan's start.
    var decodesInOrder: Bool { true }

    /// A sequential scan gives each block whole.
    var writesWholeBlocks: Bool { true }

    func decode(rows: Range<Int>, into window: CoefficientWindow) throws {
        try decoder.record(through: rows.upperBound * scans.frame.mcusAcross, every: stride, into: &states,
                           window: window)
        guard decoder.position == decoder.mcuCount, !states.isEmpty else { return }
        let states = self.states
        self.states = []
        try? JPEGEntropyIndex.fitted(key: key, scans: scans, stride: stride, states: states, name: name)
            .write(to: file, folder: folder)
    }
}
