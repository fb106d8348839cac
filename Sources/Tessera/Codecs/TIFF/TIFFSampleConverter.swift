/// Turns a run of pixels as libtiff decodes them (interleaved samples, possibly packed below 8 bits, palette
/// indices, CMYK, min-is-white, premultiplied alpha) into Tessera's pixel format (`TIFFLayout.outputFormat`).
struct TIFFSampleConverter {
    private let layout: TIFFLayout
    /// The palette as 8-bit RGB triples, for palette images.
    private let palette: [UInt8]

    /// `colorMap` is the file's 16-bit red, green and blue tables, required for palette images.
    init(layout: TIFFLayout, colorMap: [[UInt16]]?, name: String) throws {
        self.layout = layout
        guard layout.photometric == .palette else {
            palette = []
            return
        }
        let entries = 1 << layout.bitsPerSample
        guard let colorMap, colorMap.count == 3, colorMap.allSatisfy({ $0.count == entries }) else {
            throw TesseraError.corrupt(path: name, detail: "the palette TIFF has no colour map")
        }
        // Some writers store 8-bit values in the 16-bit table; libtiff's RGBA reader makes the same guess.
        let eightBit = colorMap.allSatisfy { $0.allSatisfy { $0 < 256 } }
        var palette = [UInt8](repeating: 0, count: entries * 3)
        for index in 0..<entries {
            for channel in 0..<3 {
                let value = colorMap[channel][index]
                palette[index * 3 + channel] = UInt8(eightBit ? value : value >> 8)
            }
        }
        self.palette = palette
    }

    /// Converts `count` pixels starting at pixel `first` of a decoded row at `source` to `target`.
    func convert(_ source: UnsafeRawPointer, first: Int, count: Int, into target: UnsafeMutableRawPointer) {
        switch layout.bitsPerSample {
        case 8: convertSamples(UInt8.self, source, first: first, count: count, into: target)
        case 16: convertSamples(UInt16.self, source, first: first, count: count, into: target)
        default: convertPacked(source, first: first, count: count, into: target)
        }
    }

    /// 1-, 2- and 4-bit single-sample rows: gray scaled to 8 bits, or palette indices.
    private func convertPacked(_ source: UnsafeRawPointer, first: Int, count: Int, into target: UnsafeMutableRawPointer) {
        let bits = layout.bitsPerSample, mask = (1 << bits) - 1, perByte = 8 / bits
        let bytes = source.assumingMemoryBound(to: UInt8.self), out = target.assumingMemoryBound(to: UInt8.self)
        let invert = layout.photometric == .minIsWhite, isPalette = layout.photometric == .palette
        for index in 0..<count {
            let pixel = first + index
            let shift = 8 - bits * (pixel % perByte + 1)
            let value = Int(bytes[pixel / perByte]) >> shift & mask
            if isPalette {
                out[3 * index] = palette[3 * value]
                out[3 * index + 1] = palette[3 * value + 1]
                out[3 * index + 2] = palette[3 * value + 2]
            } else {
                let level = value * 255 / mask
                out[index] = UInt8(invert ? 255 - level : level)
            }
        }
    }

    /// 8- and 16-bit rows; the output keeps the sample width except for palettes (always 8-bit RGB).
    private func convertSamples<Sample: FixedWidthInteger & UnsignedInteger>(
        _: Sample.Type, _ source: UnsafeRawPointer, first: Int, count: Int, into target: UnsafeMutableRawPointer) {
        let samples = layout.samplesPerPixel, maxValue = Int(Sample.max)
        let input = source.assumingMemoryBound(to: Sample.self)
        if layout.photometric == .palette {
            let out = target.assumingMemoryBound(to: UInt8.self)
            for index in 0..<count {
                let value = Int(input[(first + index) * samples])
                for channel in 0..<3 { out[3 * index + channel] = palette[3 * value + channel] }
            }
            return
        }
        let out = target.assumingMemoryBound(to: Sample.self)
        let outChannels = layout.outputFormat.channelCount, alphaSample = layout.alphaSample
        for index in 0..<count {
            let pixel = input + (first + index) * samples, result = out + index * outChannels
            let alpha = alphaSample.map { Int(pixel[$0]) } ?? maxValue
            var color = (0, 0, 0)
            switch layout.photometric {
            case .minIsBlack: color.0 = Int(pixel[0])
            case .minIsWhite: color.0 = maxValue - Int(pixel[0])
            case .rgb, .ycbcr: color = (Int(pixel[0]), Int(pixel[1]), Int(pixel[2]))
            case .cmyk:
                let black = maxValue - Int(pixel[3])
                color = ((maxValue - Int(pixel[0])) * black / maxValue, (maxValue - Int(pixel[1])) * black / maxValue,
                         (maxValue - Int(pixel[2])) * black / maxValue)
            case .palette: break
            }
            if layout.premultiplied && alpha > 0 && alpha < maxValue {
                color = (min(maxValue, (color.0 * maxValue + alpha / 2) / alpha),
                         min(maxValue, (color.1 * maxValue + alpha / 2) / alpha),
                         min(maxValue, (color.2 * maxValue + alpha / 2) / alpha))
            }
            result[0] = Sample(truncatingIfNeeded: color.0)
            if outChannels >= 3 {
                result[1] = Sample(truncatingIfNeeded: color.1)
                result[2] = Sample(truncatingIfNeeded: color.2)
            }
            if alphaSample != nil { result[outChannels - 1] = Sample(truncatingIfNeeded: alpha) }
        }
    }
}
