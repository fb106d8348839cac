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
    /// When only `columns` (pixels) are wanted and they are at most a `cropShare`th of the width, only their blocks
    /// are turned into samples (`decodeColumns`); the planes keep the whole width's layout, their other samples
    /// zero. Truncated or corrupt data is an error naming the input, as in a decode to pixels.
    public init?(decoding input: ImageInput, scale: Int, rows: Int? = nil, columns: Range<Int>? = nil,
                 budget: MemoryBudget) throws {
        let session = try JPEGSession(input: input)
        let info = session.info
        let space = info.pointee.jpeg_color_space, components = Int(info.pointee.num_components)
        guard (space == JCS_YCbCr && components == 3) || (space == JCS_GRAYSCALE && components == 1),
              Int(info.pointee.image_width) * Int(info.pointee.image_height) <= JPEGCoefficientCrop.maxPixels else {
            return nil
        }
        let maxH = Int(info.pointee.max_h_samp_factor), maxV = Int(info.pointee.max_v_samp_factor)
        let sampling = (0..<components).map {
            (h: Int(info.pointee.comp_info[$0].h_samp_factor), v: Int(info.pointee.comp_info[$0].v_samp_factor))
        }
        let cropped = columns.flatMap { columns -> Range<Int>? in
            let width = Int(info.pointee.image_width)
            guard scale == 1, !columns.isEmpty, columns.lowerBound >= 0, columns.upperBound <= width,
                  columns.count * Self.cropShare <= width,
                  sampling.allSatisfy({ maxH % $0.h == 0 && maxV % $0.v == 0 }) else { return nil }
            return columns
        }
        info.pointee.scale_num = 1
        info.pointee.scale_denom = UInt32(scale)
        if cropped == nil {
            info.pointee.raw_data_out = 1
        } else {
            // Each plane's samples as they are, repeated (not interpolated) up to whole pixels: the output's first
            // pixel of each sample is that sample.
            info.pointee.out_color_space = space
            info.pointee.do_fancy_upsampling = 0
        }
        if info.pointee.progressive_mode != 0 {
            try budget.check(JPEGDecoder.coefficientBytes(info), for: "decoding this progressive JPEG", path: input.name)
        }
        try session.check(tessera_jpeg_start_decompress(session.decoder), during: "starting to decode")
        let minScaled = Int(info.pointee.min_DCT_scaled_size), lines = maxV * minScaled
        let height = min(Int(info.pointee.output_height), rows.map { max(1, $0) } ?? .max)
        let iMCURows = (height + lines - 1) / lines
        var planes: [Plane] = []
        for index in 0..<components {
            let component = info.pointee.comp_info[index]
            let (h, v) = sampling[index]
            let scaled = Int(component.DCT_scaled_size)
            let blocksAcross = (Int(component.width_in_blocks) + h - 1) / h * h
            planes.append(Plane(width: Int(component.downsampled_width),
                                height: min(Int(component.downsampled_height), iMCURows * v * scaled),
                                stride: blocksAcross * scaled, rows: iMCURows * v * scaled,
                                offset: planes.last?.end ?? 0,
                                pixelsPerSample: (Double(maxH * minScaled) / Double(h * scaled),
                                                  Double(maxV * minScaled) / Double(v * scaled))))
        }
        try budget.check(planes.last?.end ?? 0, for: "decoding a JPEG's planes", path: input.name)
        self.init(size: Size(width: Int(info.pointee.output_width),
                             height: min(Int(info.pointee.output_height), iMCURows * lines)),
                  planes: planes)
        if let cropped {
            try decodeColumns(cropped, rows: size.height, linesAtOnce: lines, session: session, name: input.name)
        } else {
            let linesPerPlane = (0..<components).map {
                sampling[$0].v * Int(info.pointee.comp_info[$0].DCT_scaled_size)
            }
            for iMCURow in 0..<iMCURows {
                var read: JDIMENSION = 0
                try withRowPointers(iMCURow: iMCURow, linesPerPlane: linesPerPlane) { pointers in
                    try session.check(tessera_jpeg_read_raw_data(session.decoder, pointers, JDIMENSION(lines), &read),
                                      during: "decoding")
                }
                try session.checkMissingData(allowPartial: false)
                guard read > 0 else {
                    throw TesseraError.truncated(path: input.name, detail: "after row \(Int(info.pointee.output_scanline))")
                }
            }
        }
        // A decode stopped early is not finished (libjpeg would call it too few rows), only let go with the session.
        if info.pointee.output_scanline == info.pointee.output_height {
            try session.check(tessera_jpeg_finish_decompress(session.decoder), during: "finishing the decode")
        }
    }

    /// How many times narrower than a JPEG the columns asked for must be for a decode to keep to them. libjpeg
    /// decodes planes (`raw_data_out`) only whole across; keeping to some columns instead means a decode to
    /// pixels (`jpeg_crop_scanline`) whose chroma is repeated, not interpolated, and taken back one sample per
    /// pixel. For a 256-pixel stored tile: whole, 55 to 130 us; its first 16 columns that way, 29 to 95 us; 108
    /// columns, 122 us against 94.
    static let cropShare = 4

    /// Fills the samples of `columns` (pixels), in the first `rows` rows, from the session's decode of the JPEG
    /// to YCbCr (or gray) pixels cut to those columns, `linesAtOnce` rows a call (an iMCU row's), libjpeg's
    /// upsampling set to repeat samples: each plane's sample is its first pixel's value. The session has started
    /// decompressing at scale 1, with its components' sampling dividing the largest.
    private mutating func decodeColumns(_ columns: Range<Int>, rows: Int, linesAtOnce batch: Int, session: JPEGSession,
                                        name: String) throws {
        var offset = JDIMENSION(columns.lowerBound), width = JDIMENSION(columns.count)
        try session.check(tessera_jpeg_crop_scanline(session.decoder, &offset, &width), during: "cropping")
        let first = Int(offset), count = Int(width), components = planes.count
        // Each plane's pixels per sample across and down, whole numbers at scale 1.
        let steps = planes.map { (across: Int($0.pixelsPerSample.x), down: Int($0.pixelsPerSample.y)) }
        let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: batch * count * components)
        defer { pixels.deallocate() }
        let pointers = UnsafeMutablePointer<JSAMPROW?>.allocate(capacity: batch)
        defer { pointers.deallocate() }
        for line in 0..<batch { pointers[line] = pixels + line * count * components }
        let planes = planes
        try samples.withUnsafeMutableBufferPointer { samples in
            var y = 0
            while y < rows {
                var read: JDIMENSION = 0
                try session.check(tessera_jpeg_read_scanlines(session.decoder, pointers, JDIMENSION(min(batch, rows - y)),
                                                              &read), during: "decoding")
                try session.checkMissingData(allowPartial: false)
                guard read > 0 else { throw TesseraError.truncated(path: name, detail: "after row \(y)") }
                for line in 0..<Int(read) {
                    let row = pixels + line * count * components
                    for (index, plane) in planes.enumerated() {
                        let (across, down) = steps[index]
                        guard (y + line) % down == 0 else { continue }
                        let target = samples.baseAddress! + plane.offset + (y + line) / down * plane.stride
                        var sample = first / across
                        while sample * across < first + count {
                            target[sample] = row[(sample * across - first) * components + index]
                            sample += 1
                        }
                    }
                }
                y += Int(read)
            }
        }
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
        let rows = UnsafeMutablePointer<JSAMPROW?>.allocate(capacity: linesPerPlane.reduce(0, +))
        defer { rows.deallocate() }
        let arrays = UnsafeMutablePointer<JSAMPARRAY?>.allocate(capacity: planes.count)
        defer { arrays.deallocate() }
        let planes = planes
        return try samples.withUnsafeMutableBufferPointer { buffer in
            var next = 0
            for (index, plane) in planes.enumerated() {
                arrays[index] = rows + next
                let first = iMCURow * linesPerPlane[index]
                for line in 0..<linesPerPlane[index] {
                    rows[next + line] = buffer.baseAddress! + plane.offset + min(first + line, plane.rows - 1) * plane.stride
                }
                next += linesPerPlane[index]
            }
            return try body(arrays)
        }
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
