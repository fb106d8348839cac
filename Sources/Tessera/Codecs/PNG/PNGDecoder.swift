import CCodecShims
import CPNG

/// Decodes PNG through libpng: 1-16 bit, gray, gray+alpha, RGB, RGBA, palette (to RGB), tRNS (to alpha).
/// Rows stream top to bottom; an Adam7-interlaced image must be held whole, so it is checked against the budget.
final class PNGDecoder: ImageDecoder {
    private let session: PNGSession
    private let allowPartial: Bool
    /// The whole image, for interlaced files only.
    private var deinterlaced: [UInt8]?
    private var row = 0
    private var failed = false
    let size: Size
    let format: PixelFormat

    static func readProperties(of input: ImageInput) throws -> ImageProperties {
        let session = try PNGSession(input: input)
        return withExtendedLifetime(session) {
            let png = session.structPointer, info = session.infoPointer
            return properties(png: png, info: info, colorType: Int32(png_get_color_type(png, info)),
                              bitDepth: Int(png_get_bit_depth(png, info)), channels: Int(png_get_channels(png, info)),
                              hasTransparency: png_get_valid(png, info, PNG_INFO_tRNS) != 0)
        }
    }

    /// What a PNG's header says, given the values the pixel transformations change (as stored in the file).
    static func properties(png: png_structp, info: png_infop, colorType: Int32, bitDepth: Int, channels: Int,
                           hasTransparency: Bool) -> ImageProperties {
        let model: ColorModel
        switch colorType {
        case PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA: model = .gray
        case PNG_COLOR_TYPE_PALETTE: model = .palette
        default: model = .rgb
        }
        var exifCount: png_uint_32 = 0
        var exif: png_bytep?
        var orientation = 1
        if png_get_eXIf_1(png, info, &exifCount, &exif) != 0, let exif {
            orientation = EXIF.orientation(in: Array(UnsafeBufferPointer(start: exif, count: Int(exifCount)))) ?? 1
        }
        return ImageProperties(
            format: .png, width: Int(png_get_image_width(png, info)), height: Int(png_get_image_height(png, info)),
            channels: channels, bitDepth: bitDepth, colorModel: model,
            hasAlpha: colorType & PNG_COLOR_MASK_ALPHA != 0 || hasTransparency,
            orientation: orientation, hasICCProfile: png_get_valid(png, info, PNG_INFO_iCCP) != 0,
            isProgressive: Int32(png_get_interlace_type(png, info)) == PNG_INTERLACE_ADAM7)
    }

    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws {
        session = try PNGSession(input: input)
        allowPartial = request.allowPartial
        let png = session.structPointer
        png_set_expand(png)  // palette to RGB, gray below 8 bits to 8, tRNS to alpha
        #if _endian(little)
        png_set_swap(png)  // Tessera keeps 16-bit samples in native byte order
        #endif
        let interlaced = properties.isProgressive
        if interlaced { _ = png_set_interlace_handling(png) }
        // png_set_expand gives RGB for palettes, 8 bits for smaller gray, and an alpha channel for tRNS.
        let channels: PixelFormat.Channels = properties.colorModel == .gray
            ? (properties.hasAlpha ? .grayAlpha : .gray) : (properties.hasAlpha ? .rgba : .rgb)
        format = PixelFormat(channels, bitDepth: properties.bitDepth == 16 ? 16 : 8)
        size = properties.size
        // libpng allocates (and clears) its row buffers in png_read_update_info, so the budget is checked first.
        try request.budget.checkRows(width: size.width, rows: interlaced ? size.height : 3, format: format,
                                     for: interlaced ? "decoding this interlaced PNG" : "a row of pixels",
                                     path: input.name)
        try session.check(tessera_png_read_update_info(session.png), during: "reading the header")
    }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        let rowBytes = size.width * format.bytesPerPixel
        if deinterlaced == nil && Int32(png_get_interlace_type(session.structPointer, session.infoPointer))
            == PNG_INTERLACE_ADAM7 {
            try readInterlacedImage()
        }
        for index in 0..<count {
            let target = rows.advanced(by: index * bytesPerRow)
            if let deinterlaced {
                deinterlaced.withUnsafeBytes { target.copyMemory(from: $0.baseAddress!.advanced(by: row * rowBytes),
                                                                 byteCount: rowBytes) }
            } else if failed {
                target.initializeMemory(as: UInt8.self, repeating: 0, count: rowBytes)
            } else if tessera_png_read_row(session.png, target.assumingMemoryBound(to: UInt8.self)) == 0 {
                try handleFailure(atRow: row)
                target.initializeMemory(as: UInt8.self, repeating: 0, count: rowBytes)
            }
            row += 1
        }
    }

    /// libpng can only deinterlace into a whole image (already checked against the budget).
    private func readInterlacedImage() throws {
        let rowBytes = size.width * format.bytesPerPixel
        var image = [UInt8](repeating: 0, count: rowBytes * size.height)
        let status = image.withUnsafeMutableBytes { raw in
            var pointers = (0..<size.height).map {
                Optional(raw.baseAddress!.advanced(by: $0 * rowBytes).assumingMemoryBound(to: UInt8.self))
            }
            return pointers.withUnsafeMutableBufferPointer { tessera_png_read_image(session.png, $0.baseAddress) }
        }
        if status == 0 { try handleFailure(atRow: 0) }
        deinterlaced = image
    }

    /// A failed row is an error, unless partial output was asked for and the data merely ran out.
    private func handleFailure(atRow row: Int) throws {
        if let failure = session.readFailure { throw failure }
        guard allowPartial && session.lastErrorWasEndOfData else {
            if session.lastErrorWasEndOfData {
                throw TesseraError.truncated(path: session.name, detail: "after row \(row.grouped) of \(size.height.grouped)")
            }
            throw TesseraError.corrupt(path: session.name, detail: "\(session.message) (at row \(row.grouped))")
        }
        failed = true
    }
}
