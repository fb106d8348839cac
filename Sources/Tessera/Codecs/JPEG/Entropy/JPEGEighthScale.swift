import CCodecShims
import CJPEG

/// What libjpeg does to a sequential JPEG's coefficients to decode it at 1/8 of its size, done in Swift so that a
/// band decoded by Tessera's entropy decoding needs no second trip through libjpeg (re-encoded, then entropy-decoded
/// again): each component scaled by libjpeg's 1x1 or 2x2 IDCT (`JPEGReducedIDCT`), as jdmaster.c sizes them, then
/// repeated by whole factors up to the largest sampling (libjpeg does no fancy upsampling at 1/8), then YCbCr
/// converted to RGB with its tables (`JPEGYCbCr`). The rows equal libjpeg's decode at 1/8.
///
///     CoefficientWindow -> per component: 1x1 or 2x2 IDCT -> samples -> repeated -> YCbCr to RGB -> rows
struct JPEGEighthScale {
    /// How one component's coefficients become output samples.
    struct Plane {
        /// Samples per block side: 1 or 2 (libjpeg's DCT_scaled_size at 1/8).
        let blockSamples: Int
        /// How many output columns and rows each sample fills.
        let horizontalRepeat: Int
        let verticalRepeat: Int
        /// The component's quantisation table, in natural order.
        let quantization: [Int]
    }

    private enum Transform { case gray, ycbcr, rgb }

    let frame: JPEGFrameHeader
    let format: PixelFormat
    private let planes: [Plane]
    private let transform: Transform

    /// The recipe for the frame whose header `session` has read, or nil where libjpeg would do something else
    /// (a colour space other than gray, YCbCr or RGB, a component scaled by a 4x4 or larger IDCT, sampling that
    /// does not repeat by whole factors): such files keep libjpeg's path.
    init?(frame: JPEGFrameHeader, session: JPEGSession) {
        let info = session.info.pointee
        switch (info.jpeg_color_space, frame.components.count) {
        case (JCS_GRAYSCALE, 1): transform = .gray
        case (JCS_YCbCr, 3): transform = .ycbcr
        case (JCS_RGB, 3): transform = .rgb
        default: return nil
        }
        var planes: [Plane] = []
        for (index, component) in frame.components.enumerated() {
            let size = Self.idctSize(of: component, in: frame)
            guard size <= 2, frame.maxHorizontal % (component.horizontal * size) == 0,
                  frame.maxVertical % (component.vertical * size) == 0,
                  let table = session.quantization(component: index) else { return nil }
            planes.append(Plane(blockSamples: size, horizontalRepeat: frame.maxHorizontal / (component.horizontal * size),
                                verticalRepeat: frame.maxVertical / (component.vertical * size), quantization: table))
        }
        self.frame = frame
        self.planes = planes
        format = transform == .gray ? .gray8 : .rgb8
    }

    /// The side of the IDCT libjpeg scales `component` of `frame` by at 1/8 (jdmaster.c): from 1, doubled while
    /// both its ratios to the largest sampling stay divisible by twice it.
    static func idctSize(of component: JPEGFrameHeader.Component, in frame: JPEGFrameHeader) -> Int {
        var size = 1
        while size < 8, frame.maxHorizontal % (component.horizontal * size * 2) == 0,
              frame.maxVertical % (component.vertical * size * 2) == 0 { size *= 2 }
        return size
    }

    /// Per component of `frame`, whether a decode at 1/`scale` reads its DC coefficient alone: at 1/8, the
    /// components libjpeg scales by a 1x1 IDCT (full-sampled ones).
    static func dcOnly(_ frame: JPEGFrameHeader, scale: Int) -> [Bool] {
        frame.components.map { scale == 8 && idctSize(of: $0, in: frame) == 1 }
    }

    /// The 1/8 rows of the window's MCU rows, whose pixels at full size are `width` x `height` (the window's
    /// columns from its first, cut by the image's edge): `ceil(width / 8)` x `ceil(height / 8)` pixels.
    func band(of window: CoefficientWindow, width: Int, height: Int) -> EighthScaleBand {
        let size = Size(width: (width + 7) / 8, height: (height + 7) / 8)
        let blockRows = window.endRow - window.firstRow
        // Each component's samples over the window (blocks across and down times the samples per block), then
        // one row of repeated samples per component that repeats.
        let strides = planes.indices.map { window.strides[$0] * planes[$0].blockSamples }
        let heights = planes.indices.map { blockRows * frame.components[$0].vertical * planes[$0].blockSamples }
        let offsets = planes.indices.map { index in (0..<index).reduce(0) { $0 + strides[$1] * heights[$1] } }
        let sampleBytes = offsets.last! + strides.last! * heights.last!
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: sampleBytes + planes.count * size.width)
        defer { storage.deallocate() }
        for (index, plane) in planes.enumerated() {
            let n = plane.blockSamples, vertical = frame.components[index].vertical
            plane.quantization.withUnsafeBufferPointer { table in
                for row in 0..<blockRows * vertical {
                    let blocks = UnsafePointer(window.blockRow(component: index, row: window.firstRow * vertical + row))
                    let line = storage + offsets[index] + row * n * strides[index]
                    for column in 0..<window.strides[index] {
                        if n == 1 {
                            line[column] = JPEGReducedIDCT.oneByOne(dc: blocks[column &* 64], quantization: table[0])
                        } else {
                            JPEGReducedIDCT.twoByTwo(blocks + column &* 64, quantization: table.baseAddress!,
                                                     into: line + 2 &* column, stride: strides[index])
                        }
                    }
                }
            }
        }
        let channels = format.channelCount
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * channels)
        var rows = [UnsafePointer<UInt8>](repeating: UnsafePointer(storage), count: planes.count)
        pixels.withUnsafeMutableBufferPointer { pixels in
            for y in 0..<size.height {
                for (index, plane) in planes.enumerated() {
                    let source = storage + offsets[index] + y / plane.verticalRepeat * strides[index]
                    let factor = plane.horizontalRepeat
                    if factor == 1 {
                        rows[index] = UnsafePointer(source)
                    } else {
                        // Each sample written `factor` times, with no division per pixel.
                        let target = storage + sampleBytes + index * size.width
                        for sample in 0..<(size.width + factor - 1) / factor {
                            let value = source[sample]
                            for x in sample &* factor..<min(size.width, (sample &+ 1) &* factor) { target[x] = value }
                        }
                        rows[index] = UnsafePointer(target)
                    }
                }
                let line = pixels.baseAddress! + y * size.width * channels
                switch transform {
                case .gray:
                    line.update(from: rows[0], count: size.width)
                case .rgb:
                    for x in 0..<size.width {
                        line[3 * x] = rows[0][x]
                        line[3 * x + 1] = rows[1][x]
                        line[3 * x + 2] = rows[2][x]
                    }
                case .ycbcr:
                    JPEGYCbCr.convert(luma: rows[0], blue: rows[1], red: rows[2], count: size.width, into: line)
                }
            }
        }
        return EighthScaleBand(size: size, format: format, pixels: pixels)
    }
}

/// A band's rows at 1/8 made by `JPEGEighthScale`, handed out as a `RowDecoder`, cropped exactly to the columns
/// asked for.
final class EighthScaleBand: RowDecoder {
    private(set) var size: Size
    let format: PixelFormat
    private let pixels: [UInt8]
    private let rowBytes: Int
    private var columns: Range<Int>
    private var row = 0

    init(size: Size, format: PixelFormat, pixels: [UInt8]) {
        self.size = size
        self.format = format
        self.pixels = pixels
        rowBytes = size.width * format.bytesPerPixel
        columns = 0..<size.width
    }

    func restrictColumns(to columns: Range<Int>) throws -> Range<Int> {
        self.columns = columns.clamped(to: 0..<size.width)
        size.width = self.columns.count
        return self.columns
    }

    func skipRows(_ count: Int) throws { row += count }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        let pixelBytes = format.bytesPerPixel
        pixels.withUnsafeBytes { pixels in
            for index in 0..<count {
                (rows + index * bytesPerRow).copyMemory(
                    from: pixels.baseAddress! + (row + index) * rowBytes + columns.lowerBound * pixelBytes,
                    byteCount: columns.count * pixelBytes)
            }
        }
        row += count
    }
}
