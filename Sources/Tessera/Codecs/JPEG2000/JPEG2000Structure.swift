/// How a JPEG 2000 file is built, from its boxes and main header: what `tessera info` shows and what decides
/// the native scales (one per resolution level) and the tiles a server offers.
public struct JPEG2000Structure: Sendable, Codable, Equatable {
    /// `JP2`, `JPH` (HTJ2K in JP2 boxes), `JPX` or `codestream` (a raw `.j2k`/`.j2c`).
    public var container: String
    /// Components in the codestream (before a palette expands them).
    public var components: Int
    /// The highest component precision, in bits, and whether samples are signed.
    public var precision: Int
    public var isSigned: Bool
    /// Resolution levels (decomposition levels + 1): the image decodes natively at 1/1 ... 1/2^(levels-1).
    public var resolutionLevels: Int
    /// The codestream tile's size on the reference grid, and the tiles across and down.
    public var tileSize: Size
    public var tileColumns: Int
    public var tileRows: Int
    /// The code-block size, and each resolution's precinct size from the lowest resolution up.
    public var codeBlockSize: Size
    public var precinctSizes: [Size]
    /// Quality layers.
    public var layers: Int
    /// LRCP, RLCP, RPCL, PCRL or CPRL.
    public var progressionOrder: String
    /// Whether the wavelet is the reversible 5/3 (lossless) rather than the irreversible 9/7.
    public var isReversible: Bool
    /// Whether code-blocks are High-Throughput (HTJ2K, ISO/IEC 15444-15).
    public var isHighThroughput: Bool
    /// The colour space the file declares: `sRGB`, `gray`, `sYCC`, `e-sYCC`, `CMYK`, `ICC`, or `unspecified`.
    public var colorSpace: String

    public init(container: String, components: Int, precision: Int, isSigned: Bool, resolutionLevels: Int,
                tileSize: Size, tileColumns: Int, tileRows: Int, codeBlockSize: Size, precinctSizes: [Size],
                layers: Int, progressionOrder: String, isReversible: Bool, isHighThroughput: Bool,
                colorSpace: String) {
        self.container = container
        self.components = components
        self.precision = precision
        self.isSigned = isSigned
        self.resolutionLevels = resolutionLevels
        self.tileSize = tileSize
        self.tileColumns = tileColumns
        self.tileRows = tileRows
        self.codeBlockSize = codeBlockSize
        self.precinctSizes = precinctSizes
        self.layers = layers
        self.progressionOrder = progressionOrder
        self.isReversible = isReversible
        self.isHighThroughput = isHighThroughput
        self.colorSpace = colorSpace
    }

    /// Whether the codestream is cut into more than one tile.
    public var isTiled: Bool { tileColumns * tileRows > 1 }
}
