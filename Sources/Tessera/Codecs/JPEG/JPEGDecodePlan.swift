/// Which decoder a JPEG decode request gets, with what was read to decide it: libjpeg's read of the header and,
/// when a Swift decoder may apply, the walk of the file's scans (`JPEGScanIndex`). Each is done at most once and
/// handed to the decoder chosen, which opens and parses nothing again.
///
/// Only a progressive 8-bit gray or 3-component first page can leave libjpeg:
/// - at 1/8, a Huffman-coded frame whose sampling libjpeg can upsample and that has at most 56 DC scans is decoded
///   from its DC scans alone (`ProgressiveDCDecoder`);
/// - otherwise, a Huffman-coded one whose whole-image coefficients, which libjpeg holds until the last scan,
///   exceed the budget is decoded a band of rows at a time (`BandedJPEGDecoder`);
/// - everything else is libjpeg's whole decode (`JPEGDecoder`), which checks those coefficients against the budget.
enum JPEGDecodePlan {
    case libjpeg(JPEGSession)
    case banded(JPEGSession, JPEGScanIndex)
    case dcOnly(JPEGScanIndex)

    /// The most DC scans the DC-only decoder takes: each gets a file cursor of its own, and a real file has one
    /// first scan and at most 13 refinements per component, so more is left to libjpeg rather than opening a file
    /// per scan.
    static let maxDCScans = 4 * 14

    /// Decides for `request`, reading the header with libjpeg or walking the scans only as the decision needs.
    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws {
        guard properties.isProgressive, request.page == 0, properties.bitDepth == 8,
              properties.channels == 1 || properties.channels == 3 else {
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

    /// The decoder chosen, built from what the plan read.
    func makeDecoder(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws -> any RowDecoder {
        switch self {
        case let .libjpeg(session):
            return try JPEGDecoder(session: session, name: input.name, request: request)
        case let .banded(session, index):
            return try BandedJPEGDecoder(input: input, properties: properties, request: request, session: session,
                                         index: index)
        case let .dcOnly(index):
            return try ProgressiveDCDecoder(index: index, input: input, request: request)
        }
    }
}
