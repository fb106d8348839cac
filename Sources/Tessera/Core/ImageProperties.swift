/// The file formats Tessera reads: image files, and tile pyramids read through their descriptor file.
public enum ImageFormat: String, Sendable, Codable, CaseIterable {
    case jpeg, png, tiff, webp, bmp, gif
    /// JPEG 2000: a JP2-family file (`.jp2`, `.jph`) or a raw codestream (`.j2k`, `.j2c`), HTJ2K included.
    case jpeg2000
    /// A Deep Zoom pyramid: its `.dzi` beside its `_files` folder.
    case deepZoom
    /// A IIIF level-0 (static) pyramid: its `info.json` beside its tile folders.
    case iiif

    /// How many first bytes `detect` looks at: 12 tell an image format; a pyramid descriptor is told by its text.
    public static let headerLength = 1024

    /// The format's name for people: `JPEG`, `Deep Zoom`, `IIIF level 0`.
    public var displayName: String {
        switch self {
        case .deepZoom: return "Deep Zoom"
        case .iiif: return "IIIF level 0"
        case .jpeg2000: return "JPEG 2000"
        default: return rawValue.uppercased()
        }
    }

    /// Whether the format is a folder of tiles read through a descriptor file rather than one image file.
    public var isTileFolder: Bool { self == .deepZoom || self == .iiif }

    /// Recognises a format from the first bytes of a file (at least 12 are needed for WebP, more for a pyramid's
    /// descriptor), not its name.
    public static func detect(_ header: some Collection<UInt8>) -> ImageFormat? {
        let bytes = Array(header.prefix(headerLength))
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + magic.count && Array(bytes[offset..<offset + magic.count]) == magic
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A])
            || starts([0x49, 0x49, 0x2B, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2B]) { return .tiff }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("BM".utf8)) { return .bmp }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts([0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A])
            || starts([0xFF, 0x4F, 0xFF, 0x51]) { return .jpeg2000 }
        let text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("<") && text.contains("schemas.microsoft.com/deepzoom") { return .deepZoom }
        if text.drop(while: \.isWhitespace).hasPrefix("{") && text.contains("iiif.io/api/image") { return .iiif }
        return nil
    }

    /// The format a file name's extension asks for when writing, e.g. `out.jpg` -> `.jpeg`.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "jpg", "jpeg", "jpe": self = .jpeg
        case "png": self = .png
        case "tif", "tiff": self = .tiff
        case "webp": self = .webp
        case "bmp": self = .bmp
        case "gif": self = .gif
        case "jp2", "jph", "j2c": self = .jpeg2000
        default: return nil
        }
    }
}

/// How a file stores colour.
public enum ColorModel: String, Sendable, Codable {
    case gray, rgb, cmyk, ycck, palette
}

/// What a file says about its image, read without decoding pixels.
public struct ImageProperties: Sendable, Codable, Equatable {
    public var format: ImageFormat
    /// Full-resolution size in pixels (of the first page for TIFF).
    public var width: Int
    public var height: Int
    /// Channels stored in the file (a palette image has 1; its colours are RGB).
    public var channels: Int
    /// Bits per stored sample (1, 2, 4, 8, 16).
    public var bitDepth: Int
    public var colorModel: ColorModel
    public var hasAlpha: Bool
    /// EXIF orientation 1-8; 1 when the file has none.
    public var orientation: Int
    public var hasICCProfile: Bool
    /// Progressive JPEG or interlaced PNG/GIF.
    public var isProgressive: Bool
    /// Pages (TIFF directories, GIF frames); 1 for single images.
    public var pageCount: Int
    /// Sizes of reduced-resolution levels, largest first, including the full resolution (TIFF pyramids).
    public var levels: [Size]
    /// The size in bytes of the file read: a tile pyramid's descriptor when the tiles are files of their own, the
    /// whole zip when they are in one.
    public var fileSize: Int
    /// The size of a tile pyramid's stored tiles (Deep Zoom, IIIF level 0), without overlap; nil for other images.
    public var tileSize: Size?
    /// A tile pyramid in a zip: its descriptor's path inside the zip (`NAME.dzi`, `NAME/info.json`); nil for a
    /// pyramid in a folder and for other images.
    public var zippedDescriptor: String?
    /// JPEG 2000: how the codestream is built (levels, tiles, layers, progression, HTJ2K); nil for other images.
    public var jpeg2000: JPEG2000Structure?

    public init(format: ImageFormat, width: Int, height: Int, channels: Int, bitDepth: Int, colorModel: ColorModel,
                hasAlpha: Bool, orientation: Int = 1, hasICCProfile: Bool = false, isProgressive: Bool = false,
                pageCount: Int = 1, levels: [Size] = [], fileSize: Int = 0) {
        self.format = format
        self.width = width
        self.height = height
        self.channels = channels
        self.bitDepth = bitDepth
        self.colorModel = colorModel
        self.hasAlpha = hasAlpha
        self.orientation = orientation
        self.hasICCProfile = hasICCProfile
        self.isProgressive = isProgressive
        self.pageCount = pageCount
        self.levels = levels.isEmpty ? [Size(width: width, height: height)] : levels
        self.fileSize = fileSize
    }

    public var size: Size { Size(width: width, height: height) }

    /// The size of the stored level that is the image reduced `scale` times (a power of two), halved rounding up or
    /// down as writers do; the full size at scale 1, nil when no level is stored at that scale.
    public func storedLevel(scale: Int) -> Size? {
        scale == 1 ? size : levels.dropFirst().first { TIFFPyramid.matches($0, full: size, factor: scale) }
    }
}
