import CCodecShims
import CJPEG

/// Encodes JPEG through libjpeg-turbo from strips of gray or RGB 8-bit rows: quality, progressive scans,
/// 4:4:4 or 4:2:0 chroma, optimized Huffman tables. Writes to a temporary file renamed on `finish()`, or to
/// memory for tiles (`encode(_:options:)`).
final class JPEGEncoder: RowPointerEncoder {
    private let encoder: OpaquePointer
    let file: AtomicFile?
    let target: EncodeTarget
    var rowsWritten = 0

    static func acceptedFormat(for format: PixelFormat, options: EncodeOptions) -> PixelFormat {
        format.isColor ? .rgb8 : .gray8
    }

    /// Encodes `image` to the destination `attach` sets on libjpeg's compressor (see `JPEGStreamingEncoder`).
    static func encode(_ image: ImageBuffer, options: EncodeOptions, name: String,
                       attach: (UnsafeMutablePointer<jpeg_compress_struct>) -> Void) throws {
        let target = EncodeTarget(path: name, size: image.size, format: image.format, options: options)
        try JPEGEncoder(target: target, file: nil, attach: attach).encodeWhole(image)
    }

    /// Encodes YCbCr or gray `planes`, laid out as `JPEGPlanes(size:gray:subsampling:)` lays them out for
    /// `options.subsampling`, their samples past each plane's edges filled, to memory: no colour conversion, no
    /// chroma subsampling.
    static func encode(_ planes: inout JPEGPlanes, options: EncodeOptions, name: String) throws -> [UInt8] {
        let target = EncodeTarget(path: name, size: planes.size, format: planes.planes.count == 1 ? .gray8 : .rgb8,
                                  options: options)
        let encoder = try JPEGEncoder(target: target, file: nil, planar: true, attach: { _ in })
        let info = tessera_jpeg_encoder_info(encoder.encoder)!.pointee
        let lines = Int(info.max_v_samp_factor) * Int(DCTSIZE)
        let linesPerPlane = planes.planes.indices.map { Int(info.comp_info[$0].v_samp_factor) * Int(DCTSIZE) }
        for iMCURow in 0..<(planes.size.height + lines - 1) / lines {
            CooperativeYield.point()
            try planes.withRowPointers(iMCURow: iMCURow, linesPerPlane: linesPerPlane) {
                try encoder.check(tessera_jpeg_write_raw_data(encoder.encoder, $0, JDIMENSION(lines)))
            }
        }
        CooperativeYield.point()
        try encoder.check(encoder.endStream())
        return encoder.memoryOutput()
    }

    /// Encodes to `file`, or to memory when it is nil.
    convenience init(target: EncodeTarget, file: AtomicFile?) throws {
        try self.init(target: target, file: file, attach: { _ in })
    }

    /// `file` nil encodes to memory, or to the destination `attach` sets before libjpeg is set up; `planar` takes
    /// YCbCr or gray planes (`encode(_:options:name:)`) instead of rows of pixels.
    private init(target: EncodeTarget, file: AtomicFile?, planar: Bool = false,
                 attach: (UnsafeMutablePointer<jpeg_compress_struct>) -> Void) throws {
        let size = target.size, format = target.format, options = target.options, name = target.path
        guard size.width > 0, size.height > 0, size.width <= 65_500, size.height <= 65_500 else {
            throw TesseraError.unsupported(path: name, feature: "a \(size) JPEG (at most 65,500 pixels a side)")
        }
        if options.progressive || options.optimizeHuffman {
            // Both make libjpeg buffer the whole image's coefficients: 2 bytes per sample, chroma subsampled.
            let samplesPerPixel = format.isColor ? (options.subsampling == .s444 ? 3.0 : 1.5) : 1.0
            try options.budget.check(Int(Double(size.area) * samplesPerPixel * 2),
                                     for: "encoding a progressive or optimized JPEG", path: name)
        }
        guard let encoder = tessera_jpeg_encoder_create() else {
            throw TesseraError.io(path: name, detail: "cannot create a JPEG encoder")
        }
        self.encoder = encoder
        self.file = file
        self.target = target
        attach(tessera_jpeg_encoder_info(encoder))
        let status = tessera_jpeg_encoder_setup(
            encoder, file?.handle, JDIMENSION(size.width), JDIMENSION(size.height), Int32(format.channelCount),
            Int32(min(100, max(1, options.quality))), options.progressive ? 1 : 0,
            options.subsampling == .s444 ? 1 : 2, options.optimizeHuffman ? 1 : 0, planar ? 1 : 0)
        try check(status)
    }

    deinit { tessera_jpeg_encoder_destroy(encoder) }

    func compressRows(_ rows: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, count: Int) -> Int32 {
        tessera_jpeg_write_scanlines(encoder, rows, JDIMENSION(count))
    }

    func endStream() -> Int32 { tessera_jpeg_finish_compress(encoder) }

    var libraryMessage: String { String(cString: tessera_jpeg_encoder_message(encoder)) }

    func memoryOutput() -> [UInt8] {
        var count: UInt = 0
        let bytes = tessera_jpeg_encoder_output(encoder, &count)
        return Array(UnsafeBufferPointer(start: bytes, count: Int(count)))
    }
}
