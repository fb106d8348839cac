import CCodecShims
import CJPEG

/// A JPEG's components as its codec holds them, before upsampling and colour conversion: the luma and two chroma
/// planes of a YCbCr JPEG, each at its own sampling, or the one plane of a gray JPEG. A render from a JPEG to a
/// JPEG resamples these (`resampled(region:extent:to:subsampling:kernel:)`), so that neither codec converts colour nor
/// resamples chroma, and chroma is resampled at its own, smaller size.
public struct JPEGPlanes: Sendable {
    /// Where one component's 8-bit samples are in `samples`: `width` x `height` of them from `offset`, rows
    /// `stride` bytes apart, in `rows` rows (what libjpeg reads or writes: whole blocks, whole MCUs).
    public struct Plane: Sendable {
        public var width: Int, height: Int
        public var stride: Int, rows: Int
        public var offset: Int
        /// Pixels per sample across and down: 1 for luma, 2 for 4:2:0 chroma (other values for chroma that
        /// libjpeg's DCT scaling scaled less than luma).
        public var pixelsPerSample: (x: Double, y: Double)

        /// Where the next plane's samples start: past this one's rows.
        var end: Int { offset + stride * rows }
    }

    /// The image's size in pixels.
    public var size: Size
    /// Y, Cb, Cr; or Y alone for a gray JPEG.
    public let planes: [Plane]
    /// Every plane's samples, one after the other.
    public var samples: [UInt8]

    /// Planes of zeros.
    init(size: Size, planes: [Plane]) {
        self.size = size
        self.planes = planes
        samples = [UInt8](repeating: 0, count: planes.last?.end ?? 0)
    }

    /// Empty planes laid out as libjpeg's encoder takes them for a `size` image: gray with one plane, else YCbCr
    /// with chroma `subsampling` (4:2:0 halves it both ways), each padded to whole MCUs.
    public init(size: Size, gray: Bool, subsampling: EncodeOptions.Subsampling) {
        let step = gray || subsampling == .s444 ? 1 : 2
        let mcu = 8 * step
        let stride = (size.width + mcu - 1) / mcu * mcu, rows = (size.height + mcu - 1) / mcu * mcu
        var planes = [Plane(width: size.width, height: size.height, stride: stride, rows: rows, offset: 0,
                            pixelsPerSample: (1, 1))]
        if !gray {
            for _ in 0..<2 {
                planes.append(Plane(width: (size.width + step - 1) / step, height: (size.height + step - 1) / step,
                                    stride: stride / step, rows: rows / step,
                                    offset: planes.last!.end,
                                    pixelsPerSample: (Double(step), Double(step))))
            }
        }
        self.init(size: size, planes: planes)
    }

    /// The chroma subsampling the planes are laid out for.
    var subsampling: EncodeOptions.Subsampling {
        planes.count > 1 && planes[1].pixelsPerSample.x > 1 ? .s420 : .s444
    }

    /// The planes of the JPEG `input` decoded at 1/`scale` (1, 2, 4 or 8, by libjpeg's DCT scaling), or nil when it
    /// is not a YCbCr or gray JPEG (an RGB or CMYK one is converted by its decoder instead) or its header claims more
    /// pixels than a tile can have (`JPEGCoefficientCrop.maxPixels`: the planes are held whole, where a decode to
    /// pixels goes a strip at a time). When only its first `rows` rows (decoded pixels) are wanted, no MCU row below
    /// them is decoded (a stored tile padded past the level's edge): `size` is then the rows decoded, whole MCU rows.
    /// When only `columns` (pixels) are wanted and they are at most a `JPEGPlaneDecoder.cropShare`th of the width,
    /// only their blocks are turned into samples; the planes keep the whole width's layout, their other samples
    /// zero. Truncated or corrupt data is an error naming the input, as in a decode to pixels.
    public init?(decoding input: ImageInput, scale: Int, rows: Int? = nil, columns: Range<Int>? = nil,
                 budget: MemoryBudget) throws {
        guard let decoder = try JPEGPlaneDecoder(input: input, scale: scale, rows: rows, columns: columns,
                                                 budget: budget) else { return nil }
        try budget.check(decoder.planes.last?.end ?? 0, for: "decoding a JPEG's planes", path: input.name)
        self.init(size: decoder.size, planes: decoder.planes)
        let planes = planes
        try samples.withUnsafeMutableBufferPointer { try decoder.decode(into: $0.baseAddress!, planes: planes) }
    }

    /// The planes encoded as a baseline JPEG with `options`' quality (their layout, from
    /// `init(size:gray:subsampling:)`, sets the subsampling); `name` is for error messages. Each plane's samples
    /// past its width and height are first set to its last real ones, as libjpeg's own edge padding does.
    public consuming func encoded(options: EncodeOptions, name: String) throws -> [UInt8] {
        var padded = self
        padded.extendEdges()
        var options = options
        options.subsampling = padded.subsampling
        options.progressive = false
        return try JPEGEncoder.encode(&padded, options: options, name: name)
    }

    /// Calls `body` with libjpeg's `JSAMPIMAGE` for iMCU row `iMCURow`: for plane `i`, `linesPerPlane[i]` pointers
    /// to its rows (the last row again for any past its buffer).
    mutating func withRowPointers<Result>(iMCURow: Int, linesPerPlane: [Int],
                                          _ body: (UnsafeMutablePointer<JSAMPARRAY?>) throws -> Result) rethrows -> Result {
        let planes = planes
        return try samples.withUnsafeMutableBufferPointer {
            try Self.withRowPointers($0.baseAddress!, planes: planes, iMCURow: iMCURow, linesPerPlane: linesPerPlane, body)
        }
    }

    /// `withRowPointers(iMCURow:linesPerPlane:_:)` for planes laid out as `planes` in `samples`.
    static func withRowPointers<Result>(_ samples: UnsafeMutablePointer<UInt8>, planes: [Plane], iMCURow: Int,
                                        linesPerPlane: [Int],
                                        _ body: (UnsafeMutablePointer<JSAMPARRAY?>) throws -> Result) rethrows -> Result {
        let rows = UnsafeMutablePointer<JSAMPROW?>.allocate(capacity: linesPerPlane.reduce(0, +))
        defer { rows.deallocate() }
        let arrays = UnsafeMutablePointer<JSAMPARRAY?>.allocate(capacity: planes.count)
        defer { arrays.deallocate() }
        var next = 0
        for (index, plane) in planes.enumerated() {
            arrays[index] = rows + next
            let first = iMCURow * linesPerPlane[index]
            for line in 0..<linesPerPlane[index] {
                rows[next + line] = samples + plane.offset + min(first + line, plane.rows - 1) * plane.stride
            }
            next += linesPerPlane[index]
        }
        return try body(arrays)
    }

    /// Sets each plane's samples right of its width and below its height to the last real ones of their row and
    /// column.
    mutating func extendEdges() {
        let planes = planes
        samples.withUnsafeMutableBufferPointer { buffer in
            for plane in planes where plane.width > 0 && plane.height > 0 {
                let base = buffer.baseAddress! + plane.offset, width = plane.width, stride = plane.stride
                if width < stride {
                    for row in 0..<plane.height {
                        let line = base + row * stride
                        (line + width).update(repeating: line[width - 1], count: stride - width)
                    }
                }
                for row in plane.height..<plane.rows {
                    (base + row * stride).update(from: base + (plane.height - 1) * stride, count: stride)
                }
            }
        }
    }
}
