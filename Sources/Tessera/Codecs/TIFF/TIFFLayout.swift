import CTIFF

/// The fields of one TIFF directory that its layout (`TIFFLayout`) is read from: libtiff's current directory
/// (`TIFFFile`), or a directory read from the file's bytes (`TIFFDirectoryReader.Fields`) when only the image's
/// properties are asked for. A field the directory leaves out is nil; the layout applies libtiff's defaults.
protocol TIFFLayoutFields {
    /// The first value of a 16-bit field.
    func u16(_ tag: Int32) -> UInt16?
    /// The first value of a 32-bit (or 16-bit) field.
    func u32(_ tag: Int32) -> UInt32?
    /// The ExtraSamples types (0 unspecified, 1 associated alpha, 2 unassociated alpha).
    func extraSamples() -> [UInt16]
    /// Whether pixels are stored in tiles rather than strips.
    var isTiled: Bool { get }
    /// Whether the directory has an ICC profile (tag 34675).
    var hasICCProfile: Bool { get }
}

/// How a directory of a TIFF stores its pixels, read from its tags and validated: every size here is positive
/// and small enough that products of them are checked before use.
struct TIFFLayout: Equatable {
    /// How samples map to colour, from the Photometric tag.
    enum Photometric {
        case minIsWhite, minIsBlack, rgb, palette, cmyk, ycbcr
    }

    var width: Int
    var height: Int
    var samplesPerPixel: Int
    var bitsPerSample: Int
    var photometric: Photometric
    /// The index of the alpha sample among a pixel's samples, when the first extra sample is alpha.
    var alphaSample: Int?
    /// Whether colour samples are premultiplied by alpha (ExtraSamples = 1).
    var premultiplied: Bool
    var compression: Int
    var planarSeparate: Bool
    var isTiled: Bool
    /// A tile's size, or for strips the image width and the rows per strip, in pixels.
    var blockWidth: Int
    var blockHeight: Int
    /// EXIF orientation (tag 274), 1-8.
    var orientation: Int

    /// Reads the layout of `file`'s current directory.
    init(_ file: TIFFFile) throws { try self.init(file, name: file.name) }

    /// Reads the layout of the directory whose `fields` are given, of the TIFF named `name` (in errors).
    init(_ fields: some TIFFLayoutFields, name: String) throws {
        guard let width = fields.u32(TIFFTAG_IMAGEWIDTH), let height = fields.u32(TIFFTAG_IMAGELENGTH),
              width > 0, height > 0 else {
            throw TesseraError.corrupt(path: name, detail: "the TIFF directory has no image size")
        }
        self.width = Int(width)
        self.height = Int(height)
        samplesPerPixel = Int(fields.u16(TIFFTAG_SAMPLESPERPIXEL) ?? 1)
        bitsPerSample = Int(fields.u16(TIFFTAG_BITSPERSAMPLE) ?? 1)
        let sampleFormat = Int(fields.u16(TIFFTAG_SAMPLEFORMAT) ?? 1)
        guard sampleFormat == SAMPLEFORMAT_UINT else {
            throw TesseraError.unsupported(path: name, feature: "TIFF samples that are not unsigned integers"
                                           + " (SampleFormat \(sampleFormat))")
        }
        guard [1, 2, 4, 8, 16].contains(bitsPerSample) else {
            throw TesseraError.unsupported(path: name, feature: "\(bitsPerSample)-bit TIFF samples")
        }
        guard (1...16).contains(samplesPerPixel) else {
            throw TesseraError.corrupt(path: name, detail: "\(samplesPerPixel) samples per pixel")
        }

        let colorSamples: Int
        switch Int32(fields.u16(TIFFTAG_PHOTOMETRIC) ?? UInt16(samplesPerPixel >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK)) {
        case PHOTOMETRIC_MINISWHITE: photometric = .minIsWhite; colorSamples = 1
        case PHOTOMETRIC_MINISBLACK: photometric = .minIsBlack; colorSamples = 1
        case PHOTOMETRIC_RGB: photometric = .rgb; colorSamples = 3
        case PHOTOMETRIC_PALETTE: photometric = .palette; colorSamples = 1
        case PHOTOMETRIC_SEPARATED: photometric = .cmyk; colorSamples = 4
        case PHOTOMETRIC_YCBCR: photometric = .ycbcr; colorSamples = 3
        case let other:
            throw TesseraError.unsupported(path: name, feature: "TIFF photometric interpretation \(other)")
        }
        guard samplesPerPixel >= colorSamples else {
            throw TesseraError.corrupt(path: name, detail: "\(samplesPerPixel) samples per pixel for a"
                                       + " \(colorSamples)-channel colour model")
        }
        if photometric == .cmyk, let inkSet = fields.u16(TIFFTAG_INKSET), Int32(inkSet) != INKSET_CMYK {
            throw TesseraError.unsupported(path: name, feature: "separated TIFF inks other than CMYK")
        }
        if bitsPerSample < 8 && (samplesPerPixel != 1 || !(photometric == .minIsBlack || photometric == .minIsWhite
                                                               || photometric == .palette)) {
            throw TesseraError.unsupported(path: name, feature: "\(bitsPerSample)-bit samples outside gray or palette")
        }
        if photometric == .palette && bitsPerSample == 16 {
            throw TesseraError.unsupported(path: name, feature: "16-bit palette TIFF")
        }
        let extra = fields.extraSamples()
        if samplesPerPixel > colorSamples, let first = extra.first, first == EXTRASAMPLE_ASSOCALPHA
            || first == EXTRASAMPLE_UNASSALPHA {
            alphaSample = colorSamples
            premultiplied = first == EXTRASAMPLE_ASSOCALPHA
        } else {
            alphaSample = nil
            premultiplied = false
        }
        compression = Int(fields.u16(TIFFTAG_COMPRESSION) ?? UInt16(COMPRESSION_NONE))
        planarSeparate = Int32(fields.u16(TIFFTAG_PLANARCONFIG) ?? 1) == PLANARCONFIG_SEPARATE
        isTiled = fields.isTiled
        if isTiled {
            guard let tileWidth = fields.u32(TIFFTAG_TILEWIDTH), let tileHeight = fields.u32(TIFFTAG_TILELENGTH),
                  tileWidth > 0, tileHeight > 0 else {
                throw TesseraError.corrupt(path: name, detail: "the tiled TIFF has no tile size")
            }
            blockWidth = Int(tileWidth)
            blockHeight = Int(tileHeight)
        } else {
            // RowsPerStrip defaults to 2^32-1, "the whole image in one strip".
            blockWidth = self.width
            blockHeight = min(Int(fields.u32(TIFFTAG_ROWSPERSTRIP) ?? UInt32.max), self.height)
            guard blockHeight > 0 else { throw TesseraError.corrupt(path: name, detail: "0 rows per strip") }
        }
        let tagged = Int(fields.u16(TIFFTAG_ORIENTATION) ?? 1)
        orientation = (1...8).contains(tagged) ? tagged : 1
    }

    /// The image's size in pixels.
    var size: Size { Size(width: width, height: height) }

    /// The colour model as `ImageProperties` reports it.
    var colorModel: ColorModel {
        switch photometric {
        case .minIsWhite, .minIsBlack: return .gray
        case .rgb, .ycbcr: return .rgb
        case .palette: return .palette
        case .cmyk: return .cmyk
        }
    }

    /// The pixel format decoding produces: palette and CMYK become RGB, 1-, 2- and 4-bit gray becomes 8-bit.
    var outputFormat: PixelFormat {
        let depth = bitsPerSample == 16 ? 16 : 8
        let alpha = alphaSample != nil
        switch photometric {
        case .minIsWhite, .minIsBlack: return PixelFormat(alpha ? .grayAlpha : .gray, bitDepth: depth)
        case .palette: return .rgb8
        case .rgb, .ycbcr, .cmyk: return PixelFormat(alpha ? .rgba : .rgb, bitDepth: depth)
        }
    }
}

extension TIFFDirectoryReader.Fields: TIFFLayoutFields {
    func u16(_ tag: Int32) -> UInt16? { integer(tag).flatMap { UInt16(exactly: $0) } }

    func u32(_ tag: Int32) -> UInt32? { integer(tag).flatMap { UInt32(exactly: $0) } }

    func extraSamples() -> [UInt16] { integers(TIFFTAG_EXTRASAMPLES)?.compactMap { UInt16(exactly: $0) } ?? [] }

    /// Tiled when the directory gives a tile's width or height, as libtiff decides.
    var isTiled: Bool { count(of: TIFFTAG_TILEWIDTH) != nil || count(of: TIFFTAG_TILELENGTH) != nil }

    var hasICCProfile: Bool { count(of: TIFFTAG_ICCPROFILE) ?? 0 > 0 }
}
