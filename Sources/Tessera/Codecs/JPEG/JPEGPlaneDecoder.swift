import CCodecShims
import CJPEG

/// A JPEG about to be decoded to its planes (`JPEGPlanes`): its header read and its planes' layout worked out,
/// nothing decoded yet. The samples go wherever the caller has room for that layout: planes of their own
/// (`JPEGPlanes(decoding:)`), or a tile's place among its neighbours' (`JPEGPlanes.stored`), with no copy.
struct JPEGPlaneDecoder {
    /// The pixels decoded: the image's, or its first rows' (whole MCU rows) when only those are wanted.
    let size: Size
    /// The planes as the decode lays them out on their own, one after the other from offset 0: each `stride`
    /// samples across (whole blocks, whole MCUs) and `rows` down (whole iMCU rows), libjpeg's own widths.
    let planes: [JPEGPlanes.Plane]
    /// The columns (pixels) whose samples the decode writes: the whole blocks across for a whole decode; for a cut
    /// one, from the start of the iMCU column holding the first column asked (where libjpeg's cut starts) to the
    /// end of the iMCU column holding the last.
    let columnsWritten: Range<Int>
    private let session: JPEGSession
    private let name: String
    /// The columns (pixels) to decode alone, when they are a narrow part of the width; nil for every column.
    private let columns: Range<Int>?
    /// Rows (pixels) per iMCU row, how many iMCU rows to decode, and each plane's rows per iMCU row.
    private let lines: Int, iMCURows: Int, linesPerPlane: [Int]

    /// How many times narrower than a JPEG the columns asked for must be for a decode to keep to them. libjpeg
    /// decodes planes (`raw_data_out`) only whole across; keeping to some columns instead means a decode to
    /// pixels (`jpeg_crop_scanline`) whose chroma is repeated, not interpolated, and taken back one sample per
    /// pixel. For a 256-pixel stored tile: whole, 55 to 130 us; its first 16 columns that way, 29 to 95 us; 108
    /// columns, 122 us against 94.
    static let cropShare = 4

    /// The JPEG `input` to be decoded at 1/`scale` (1, 2, 4 or 8, by libjpeg's DCT scaling), only its first `rows`
    /// and only `columns` of them when those are wanted (as `JPEGPlanes(decoding:)` says); nil when it is not a YCbCr
    /// or gray JPEG or claims more pixels than a tile can have (`JPEGCoefficientCrop.maxPixels`). A header that
    /// cannot be read is an error naming the input.
    init?(input: ImageInput, scale: Int, rows: Int?, columns: Range<Int>?, budget: MemoryBudget) throws {
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
        CooperativeYield.point()
        try session.check(tessera_jpeg_start_decompress(session.decoder), during: "starting to decode")
        let minScaled = Int(info.pointee.min_DCT_scaled_size), lines = maxV * minScaled
        let height = min(Int(info.pointee.output_height), rows.map { max(1, $0) } ?? .max)
        let iMCURows = (height + lines - 1) / lines
        var planes: [JPEGPlanes.Plane] = [], linesPerPlane: [Int] = []
        for index in 0..<components {
            let component = info.pointee.comp_info[index]
            let (h, v) = sampling[index]
            let scaled = Int(component.DCT_scaled_size)
            let blocksAcross = (Int(component.width_in_blocks) + h - 1) / h * h
            planes.append(JPEGPlanes.Plane(width: Int(component.downsampled_width),
                                           height: min(Int(component.downsampled_height), iMCURows * v * scaled),
                                           stride: blocksAcross * scaled, rows: iMCURows * v * scaled,
                                           offset: planes.last?.end ?? 0,
                                           pixelsPerSample: (Double(maxH * minScaled) / Double(h * scaled),
                                                             Double(maxV * minScaled) / Double(v * scaled))))
            linesPerPlane.append(v * scaled)
        }
        size = Size(width: Int(info.pointee.output_width), height: min(Int(info.pointee.output_height), iMCURows * lines))
        self.planes = planes
        let align = maxH * minScaled
        columnsWritten = cropped.map { $0.lowerBound / align * align..<($0.upperBound + align - 1) / align * align }
            ?? 0..<Int(Double(planes[0].stride) * planes[0].pixelsPerSample.x)
        self.session = session
        name = input.name
        self.columns = cropped
        self.lines = lines
        self.iMCURows = iMCURows
        self.linesPerPlane = linesPerPlane
    }

    /// Decodes into `samples` laid out as `planes`: `self.planes` moved (each plane's offset and stride may differ,
    /// its offset may lie before `samples` when no column it writes does, its width and rows may not). Only the
    /// samples the decode writes are set: with `columns`, those of the columns' blocks. Truncated or corrupt data is
    /// an error naming the input.
    func decode(into samples: UnsafeMutablePointer<UInt8>, planes: [JPEGPlanes.Plane]) throws {
        let info = session.info
        if let columns {
            try decode(columns, into: samples, planes: planes)
        } else {
            for iMCURow in 0..<iMCURows {
                CooperativeYield.point()
                var read: JDIMENSION = 0
                try JPEGPlanes.withRowPointers(samples, planes: planes, iMCURow: iMCURow, linesPerPlane: linesPerPlane) {
                    try session.check(tessera_jpeg_read_raw_data(session.decoder, $0, JDIMENSION(lines), &read),
                                      during: "decoding")
                }
                try session.checkMissingData(allowPartial: false)
                guard read > 0 else {
                    throw TesseraError.truncated(path: name, detail: "after row \(Int(info.pointee.output_scanline))")
                }
            }
        }
        // A decode stopped early is not finished (libjpeg would call it too few rows), only let go with the session.
        if info.pointee.output_scanline == info.pointee.output_height {
            try session.check(tessera_jpeg_finish_decompress(session.decoder), during: "finishing the decode")
        }
    }

    /// Fills the samples of `columns` (pixels), in the first `size.height` rows, from a decode to YCbCr (or gray)
    /// pixels cut to those columns, an iMCU row's `lines` a call, libjpeg's upsampling set to repeat samples: each
    /// plane's sample is its first pixel's value.
    private func decode(_ columns: Range<Int>, into samples: UnsafeMutablePointer<UInt8>,
                        planes: [JPEGPlanes.Plane]) throws {
        var offset = JDIMENSION(columns.lowerBound), width = JDIMENSION(columns.count)
        try session.check(tessera_jpeg_crop_scanline(session.decoder, &offset, &width), during: "cropping")
        let first = Int(offset), count = Int(width), components = planes.count, rows = size.height
        // Each plane's pixels per sample across and down (whole numbers at scale 1), and the samples of the columns.
        let steps = planes.map { (across: Int($0.pixelsPerSample.x), down: Int($0.pixelsPerSample.y)) }
        let sampled = steps.map { first / $0.across..<(first + count + $0.across - 1) / $0.across }
        let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: lines * count * components)
        defer { pixels.deallocate() }
        let pointers = UnsafeMutablePointer<JSAMPROW?>.allocate(capacity: lines)
        defer { pointers.deallocate() }
        for line in 0..<lines { pointers[line] = pixels + line * count * components }
        var y = 0
        while y < rows {
            CooperativeYield.point()
            var read: JDIMENSION = 0
            try session.check(tessera_jpeg_read_scanlines(session.decoder, pointers, JDIMENSION(min(lines, rows - y)),
                                                          &read), during: "decoding")
            try session.checkMissingData(allowPartial: false)
            guard read > 0 else { throw TesseraError.truncated(path: name, detail: "after row \(y)") }
            for index in 0..<components {
                // The plane's rows among these lines: every `down`th, from the first whole multiple (two divisions
                // a call, not two a line: a sliver's tile is a few columns of 256 lines).
                let (across, down) = steps[index], step = across * components
                var line = (y + down - 1) / down * down - y, target = samples + planes[index].offset
                    + (y + line) / down * planes[index].stride
                while line < Int(read) {
                    // The sample's first pixel, `across * components` bytes after the previous sample's.
                    let source = pixels + line * count * components + index - first * components
                    for sample in sampled[index] { target[sample] = source[sample * step] }
                    line += down
                    target += planes[index].stride
                }
            }
            y += Int(read)
        }
    }
}
