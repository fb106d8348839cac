/// A JPEG frame header (SOFn) and the block geometry libjpeg derives from it: components, sampling factors,
/// blocks per component and MCUs per row, all in 8x8 blocks.
struct JPEGFrameHeader {
    /// One image component (Y, Cb, Cr, a gray channel...) as the frame declares it.
    struct Component {
        /// The identifier scans use to name it.
        var id: UInt8
        /// Sampling factors, 1 to 4.
        var horizontal: Int
        var vertical: Int
        /// The quantisation table selector, 0 to 3.
        var quantizationTable: Int
        /// The component's width and height in 8x8 blocks, without MCU padding (libjpeg's `width_in_blocks`).
        var blocksAcross = 0
        var blocksDown = 0
    }

    /// The image size in pixels.
    var width: Int
    var height: Int
    /// Bits per sample: 8 for everything libjpeg-turbo decodes here.
    var precision: Int
    /// SOF2: progressive, Huffman-coded.
    var isProgressive: Bool
    /// SOF0 or SOF1: baseline or extended sequential, Huffman-coded (what `SequentialCoefficientDecoder` reads).
    var isHuffmanSequential: Bool
    var components: [Component]
    var maxHorizontal: Int
    var maxVertical: Int
    /// MCUs per row and rows of MCUs in interleaved scans.
    var mcusAcross: Int
    var mcusDown: Int

    /// Parses an SOF segment's payload (after the length); `marker` is the SOF marker's second byte.
    init(payload: ArraySlice<UInt8>, marker: UInt8, name: String) throws {
        let bytes = Array(payload)
        guard bytes.count >= 6 else { throw TesseraError.corrupt(path: name, detail: "the frame header is too short") }
        precision = Int(bytes[0])
        height = Int(bytes[1]) << 8 | Int(bytes[2])
        width = Int(bytes[3]) << 8 | Int(bytes[4])
        let count = Int(bytes[5])
        isProgressive = marker == 0xC2
        isHuffmanSequential = marker == 0xC0 || marker == 0xC1
        guard width > 0, height > 0, (1...4).contains(count), bytes.count >= 6 + 3 * count else {
            throw TesseraError.corrupt(path: name, detail: "the frame header declares a \(width) x \(height) image"
                                       + " of \(count) components")
        }
        components = try (0..<count).map { index in
            let base = 6 + 3 * index
            let horizontal = Int(bytes[base + 1] >> 4), vertical = Int(bytes[base + 1] & 15)
            let table = Int(bytes[base + 2])
            guard (1...4).contains(horizontal), (1...4).contains(vertical), table < 4 else {
                throw TesseraError.corrupt(path: name, detail: "component \(index + 1) has sampling factors"
                                           + " \(horizontal)x\(vertical) and quantisation table \(table)")
            }
            return Component(id: bytes[base], horizontal: horizontal, vertical: vertical, quantizationTable: table)
        }
        maxHorizontal = components.map(\.horizontal).max()!
        maxVertical = components.map(\.vertical).max()!
        mcusAcross = Self.ceilingDivide(width, 8 * maxHorizontal)
        mcusDown = Self.ceilingDivide(height, 8 * maxVertical)
        for index in components.indices {
            components[index].blocksAcross = Self.ceilingDivide(width * components[index].horizontal, 8 * maxHorizontal)
            components[index].blocksDown = Self.ceilingDivide(height * components[index].vertical, 8 * maxVertical)
        }
    }

    /// Whether every component's sampling is a whole fraction of the largest, the only kind libjpeg upsamples.
    var hasIntegralSampling: Bool {
        components.allSatisfy { maxHorizontal % $0.horizontal == 0 && maxVertical % $0.vertical == 0 }
    }

    static func ceilingDivide(_ value: Int, _ divisor: Int) -> Int { (value + divisor - 1) / divisor }
}
