import COpenJPEG

/// Turns the components OpenJPEG decoded into rows of interleaved pixels: each output channel's component sampled
/// at the pixel's place (components subsampled against component 0 repeat their nearest sample, as
/// `opj_decompress -upsample` does), signed samples offset to unsigned, sYCC converted to RGB, and precisions
/// widened or narrowed to the output's 8 or 16 bits by `v * (2^out - 1) / (2^in - 1)`, rounded.
struct JPEG2000Samples {
    private struct Plane {
        var data: UnsafeMutablePointer<Int32>
        var width: Int
        /// The component's sample index for each output column.
        var columns: [Int]
        var rowOrigin: Int
        var rowStep: (numerator: Int, denominator: Int)
        var height: Int
        var offset: Int32
        var maximum: Int32
        var precision: Int
    }

    private let planes: [Plane]
    private let format: PixelFormat
    private let convertsYCC: Bool
    /// Whether every plane's columns are consecutive samples (not subsampled horizontally) at the output's
    /// precision and no colour is converted: each channel is then its plane's row, offset and clamped, in one pass
    /// (a server's whole tiles: a fifth of its time went to the general loop).
    private let copiesPlanes: Bool

    /// `image` holds a decoded area; `columns`... are component 0's columns at the decoded reduction (absolute,
    /// from the reference grid's origin), `count` of them; `referenceSampling` is component 0's subsampling.
    init(image: opj_image_t, channels: JPEG2000Channels, columns first: Int, count: Int,
         referenceSampling: (dx: Int, dy: Int)) {
        format = channels.format
        convertsYCC = channels.convertsYCC
        planes = channels.components.map { index in
            let comp = image.comps[index]
            let scale = 1 << Int(comp.factor)
            let x0 = ceilDivide(Int(comp.x0), scale), y0 = ceilDivide(Int(comp.y0), scale)
            let width = Int(comp.w), height = Int(comp.h), dx = Int(comp.dx), dy = Int(comp.dy)
            let columns = (0..<count).map { column in
                min(max((first + column) * referenceSampling.dx / dx - x0, 0), width - 1)
            }
            let precision = Int(comp.prec)
            return Plane(data: comp.data, width: width, columns: columns, rowOrigin: y0,
                         rowStep: (referenceSampling.dy, dy), height: height,
                         offset: comp.sgnd != 0 ? Int32(1) << (precision - 1) : 0,
                         maximum: precision >= 31 ? Int32.max : (Int32(1) << precision) - 1, precision: precision)
        }
        let bitDepth = channels.format.bitDepth
        copiesPlanes = !channels.convertsYCC && planes.allSatisfy { plane in
            plane.precision == bitDepth && plane.columns.indices.allSatisfy { plane.columns[$0] == plane.columns[0] + $0 }
        }
    }

    /// Converts component 0's row `row` (absolute, at the decoded reduction) into `target`.
    func convertRow(_ row: Int, into target: UnsafeMutableRawPointer) {
        let channelCount = planes.count, outputMax = (1 << format.bitDepth) - 1
        let rows = planes.map { plane -> UnsafeMutablePointer<Int32> in
            let index = min(max(row * plane.rowStep.numerator / plane.rowStep.denominator - plane.rowOrigin, 0),
                            plane.height - 1)
            return plane.data + index * plane.width
        }
        let count = planes[0].columns.count
        if copiesPlanes {
            for (channel, plane) in planes.enumerated() {
                copy(rows[channel] + (plane.columns.first ?? 0), count: count, offset: plane.offset,
                     maximum: plane.maximum, channel: channel, into: target)
            }
            return
        }
        var values = [Int32](repeating: 0, count: channelCount)
        for column in 0..<count {
            for channel in 0..<channelCount {
                let plane = planes[channel]
                values[channel] = min(max(rows[channel][plane.columns[column]] + plane.offset, 0), plane.maximum)
            }
            if convertsYCC {
                (values[0], values[1], values[2]) = JPEG2000Channels.rgb(y: values[0], cb: values[1], cr: values[2],
                                                                         bits: planes[0].precision)
            }
            for channel in 0..<channelCount {
                let plane = planes[channel]
                var value = Int(values[channel])
                if plane.precision != format.bitDepth {
                    let inputMax = Int(plane.maximum)
                    value = (value * outputMax + inputMax / 2) / inputMax
                }
                let place = column * channelCount + channel
                if format.bitDepth == 8 {
                    target.storeBytes(of: UInt8(value), toByteOffset: place, as: UInt8.self)
                } else {
                    target.storeBytes(of: UInt16(value), toByteOffset: place * 2, as: UInt16.self)
                }
            }
        }
    }

    /// Writes `count` samples of one plane, offset and clamped, as channel `channel` of interleaved pixels.
    private func copy(_ samples: UnsafeMutablePointer<Int32>, count: Int, offset: Int32, maximum: Int32, channel: Int,
                      into target: UnsafeMutableRawPointer) {
        let step = planes.count
        if format.bitDepth == 8 {
            let output = target.assumingMemoryBound(to: UInt8.self) + channel
            for column in 0..<count {
                output[column * step] = UInt8(truncatingIfNeeded: min(max(samples[column] &+ offset, 0), maximum))
            }
        } else {
            let output = target.assumingMemoryBound(to: UInt16.self) + channel
            for column in 0..<count {
                output[column * step] = UInt16(truncatingIfNeeded: min(max(samples[column] &+ offset, 0), maximum))
            }
        }
    }
}
