import Foundation

/// Which decoder a JPEG decode request gets, with what was read to decide it: libjpeg's read of the header and,
/// when a Swift decoder may apply, the walk of the file's scans (`JPEGScanIndex`). Each is done at most once and
/// handed to the decoder chosen, which opens and parses nothing again.
///
/// A sequential 8-bit gray or 3-component JPEG file with an entropy index (`JPEGEntropyIndex`) in the request's
/// folder, asked for a region of less than half its area, has the region's MCUs decoded from the index's saved
/// states (`BandedJPEGDecoder` over `IndexedCoefficients`); a whole read stays libjpeg's, which is faster at
/// that alone. Only the first scan's header is read to decide: the index, keyed by the file's size and time,
/// vouches for the rest.
///
/// A whole read of such a file of at least `parallelMinimumPixels`, on at least `parallelMinimumCores`, is decoded
/// on every core from its entropy index (`ParallelBandDecoder`): the one in the request's folder, or, on first
/// contact on at least `speculativeMinimumCores` (2, or 4 at 1/8), one built there by speculative decoding on every
/// core (`SpeculativeIndexBuild`), so later reads of the file, whole or regions, start from it. On first contact
/// at 1/8 on fewer cores, a whole read is one serial pass of Tessera's decoder that records the index on the way
/// (`RecordingCoefficients`): as fast as libjpeg's, and the next read is on every core.
///
/// Otherwise, only a progressive 8-bit gray or 3-component first page can leave libjpeg:
/// - at 1/8, a Huffman-coded frame whose sampling libjpeg can upsample and that has at most 56 DC scans is decoded
///   from its DC scans alone (`ProgressiveDCDecoder`);
/// - otherwise, a Huffman-coded one whose whole-image coefficients, which libjpeg holds until the last scan,
///   exceed the budget is decoded a band of rows at a time (`BandedJPEGDecoder`);
/// - everything else is libjpeg's whole decode (`JPEGDecoder`), which checks those coefficients against the budget.
enum JPEGDecodePlan {
    case libjpeg(JPEGSession)
    case banded(JPEGSession, JPEGScanIndex)
    case dcOnly(JPEGScanIndex)
    case indexed(JPEGSession, JPEGScanIndex, JPEGEntropyIndex)
    case parallel(JPEGScanIndex, JPEGEntropyIndex, workers: Int)
    case recording(JPEGSession, JPEGScanIndex, RecordingCoefficients)

    /// The fewest pixels a JPEG decoded on every core has: below, libjpeg's one pass is quick enough that an index
    /// file per image (built and written on first contact) is not worth it.
    static let parallelMinimumPixels = 16_000_000
    /// The fewest cores that make decoding on every core pay: each core's work costs little more than libjpeg's
    /// serial decode of the same rows (at 1/8 the bands' rows are made from their coefficients, `JPEGEighthScale`;
    /// at other scales libjpeg is fed them, `BandedJPEGDecoder`), so 2 already do (BENCHMARKS.md).
    static let parallelMinimumCores = 2
    /// The fewest cores on which building the index on first contact by speculative decoding on every core, then
    /// decoding from it, beats the alternative at 1/`scale`: 2 against libjpeg's serial decode (a full decode of
    /// the 100 MP sample 0.9x djpeg's time, the index left for later reads); 4 at 1/8, where one serial pass of
    /// Tessera's decoder records the index for about libjpeg's own time (BENCHMARKS.md).
    static func speculativeMinimumCores(scale: Int) -> Int { scale == 8 ? 4 : 2 }

    /// The most DC scans the DC-only decoder takes: each gets a file cursor of its own, and a real file has one
    /// first scan and at most 13 refinements per component, so more is left to libjpeg rather than opening a file
    /// per scan.
    static let maxDCScans = 4 * 14

    /// Decides for `request`, reading the header with libjpeg or walking the scans only as the decision needs.
    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws {
        let plain = request.page == 0 && properties.bitDepth == 8 && (properties.channels == 1 || properties.channels == 3)
        if plain && !properties.isProgressive, let (scans, index) = Self.entropyIndex(input: input, properties: properties,
                                                                                       request: request) {
            self = .indexed(try JPEGSession(input: input), scans, index)
            return
        }
        if plain && !properties.isProgressive, let whole = try Self.wholeRead(input: input, properties: properties,
                                                                               request: request) {
            self = whole
            return
        }
        guard properties.isProgressive, plain else {
            self = .libjpeg(try JPEGSession(input: input))
            return
        }
        var index: JPEGScanIndex?
        if request.scale == 8 {
            let walked = try JPEGScanIndex(input: input)
            let frame = walked.frame
            if frame.isProgressive, frame.precision == 8, frame.hasIntegralSampling,
               walked.scans.filter(\.isDC).count <= Self.maxDCScans {
                self = .dcOnly(walked)
                return
            }
            index = walked
        }
        let session = try JPEGSession(input: input)
        guard session.info.pointee.arith_code == 0,
              JPEGDecoder.coefficientBytes(session.info) > request.budget.limit else {
            self = .libjpeg(session)
            return
        }
        self = .banded(session, try index ?? JPEGScanIndex(input: input))
    }

    /// The entropy index to read `request`'s region with, and the scan it describes; nil when there is no region of
    /// less than half the image, no index, or none to trust.
    private static func entropyIndex(input: ImageInput, properties: ImageProperties, request: DecodeRequest)
        -> (JPEGScanIndex, JPEGEntropyIndex)? {
        let size = reducedSize(properties.size, by: request.scale)
        guard let folder = request.entropyIndexFolder, case let .file(path) = input, let region = request.region,
              2 * region.width * region.height < size.width * size.height,
              let key = try? JPEGEntropyIndex.Key(path: path),
              FileManager.default.fileExists(atPath: JPEGEntropyIndex.location(of: path, key: key, folder: folder))
        else { return nil }
        // A header the walk refuses is left to libjpeg, which says what is wrong with it.
        guard let scans = try? JPEGScanIndex(input: input, firstScanOnly: true), SequentialCoefficientDecoder.canDecode(scans),
              let index = JPEGEntropyIndex.load(for: path, scans: scans, folder: folder) else { return nil }
        return (scans, index)
    }

    /// How a whole read of `input` leaves libjpeg: on every core from its index (`.parallel`), or in one pass that
    /// records it (`.recording`); nil for a region, a small image (under `minimumPixels`, or under two bands per
    /// core), a budget too small for the bands, no cache folder, or a file Tessera's sequential decoder does not
    /// read (left to libjpeg, which says what is wrong with it). `cores` is this machine's.
    static func wholeRead(input: ImageInput, properties: ImageProperties, request: DecodeRequest,
                          minimumPixels: Int = parallelMinimumPixels, cores: Int? = nil) throws -> JPEGDecodePlan? {
        let size = reducedSize(properties.size, by: request.scale)
        guard let folder = request.entropyIndexFolder, case let .file(path) = input,
              request.region.map({ $0 == Rect(x: 0, y: 0, width: size.width, height: size.height) }) ?? true,
              properties.width * properties.height >= minimumPixels,
              let scans = try? JPEGScanIndex(input: input, firstScanOnly: true), SequentialCoefficientDecoder.canDecode(scans)
        else { return nil }
        // The cores are counted last of the cheap checks: reading /proc costs more than a small render.
        let workers = cores ?? availableCores()
        let parallel = workers >= parallelMinimumCores
            && scans.frame.mcusDown >= 2 * workers * ParallelBandDecoder.rowsPerBand(scans.frame, scale: request.scale,
                                                                                 workers: workers)
            && ParallelBandDecoder.bufferBytes(scans.frame, scale: request.scale, workers: workers) <= request.budget.limit
        if parallel, let index = JPEGEntropyIndex.load(for: path, scans: scans, folder: folder) {
            return .parallel(scans, index, workers: workers)
        }
        do {
            if parallel && workers >= speculativeMinimumCores(scale: request.scale) {
                return .parallel(scans, try JPEGEntropyIndex.loadOrBuild(for: path, folder: folder, workers: workers).index,
                                 workers: workers)
            }
            // Rows before damage (`allowPartial`) are libjpeg's to give: the pass would stop at the damage. With
            // the index kept already (on one core), there is nothing to record.
            guard request.scale == 8, !request.allowPartial else { return nil }
            let key = try JPEGEntropyIndex.Key(path: path)
            let file = JPEGEntropyIndex.location(of: path, key: key, folder: folder)
            guard !FileManager.default.fileExists(atPath: file) else { return nil }
            let recording = try RecordingCoefficients(scans: scans, input: input, scale: request.scale, key: key, file: file,
                                                      folder: folder)
            return .recording(try JPEGSession(input: input), scans, recording)
        } catch let error as TesseraError {
            // A cache folder that cannot be written, or a file too small for an index, leaves the read to libjpeg;
            // so does a damaged scan when the rows before the damage are wanted (`allowPartial`). Otherwise the
            // damage is reported with its MCU row.
            switch error {
            case .io, .unsupported: return nil
            case .truncated where request.allowPartial, .corrupt where request.allowPartial: return nil
            default: throw error
            }
        }
    }

    /// The decoder chosen, built from what the plan read.
    func makeDecoder(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws -> any RowDecoder {
        switch self {
        case let .libjpeg(session):
            return try JPEGDecoder(session: session, name: input.name, request: request)
        case let .banded(session, index):
            guard index.frame.isProgressive else {
                throw TesseraError.unsupported(path: input.name, feature: "banded decoding of a sequential JPEG")
            }
            return try BandedJPEGDecoder(input: input, properties: properties, request: request, session: session,
                                         frame: index.frame, coefficients: try ProgressiveCoefficientDecoder(
                                            index: index, input: input, allowPartial: request.allowPartial))
        case let .dcOnly(index):
            return try ProgressiveDCDecoder(index: index, input: input, request: request)
        case let .indexed(session, scans, index):
            return try BandedJPEGDecoder(input: input, properties: properties, request: request, session: session,
                                         frame: scans.frame, coefficients: try IndexedCoefficients(
                                            scans: scans, index: index, input: input, scale: request.scale))
        case let .parallel(scans, index, workers):
            return try ParallelBandDecoder(input: input, properties: properties, request: request, scans: scans,
                                           index: index, workers: workers)
        case let .recording(session, scans, coefficients):
            return try BandedJPEGDecoder(input: input, properties: properties, request: request, session: session,
                                         frame: scans.frame, coefficients: coefficients,
                                         maxBandRows: ParallelBandDecoder.rowsPerBand(scans.frame, scale: request.scale,
                                                                                      workers: 1))
        }
    }
}
