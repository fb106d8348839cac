import Foundation

/// How a thumbnail that fills its box (`--crop`) chooses the window it keeps, on the resampled image. Only one
/// axis ever has pixels to spare, so each strategy scores the windows sliding along that axis.
public enum ThumbnailCrop: String, Sendable, CaseIterable {
    /// Fit inside the box without cropping.
    case none
    /// The middle of the image.
    case centre
    /// The window with the most edge energy (the sum of luma gradient magnitudes), where detail draws the eye.
    case attention
    /// The window whose luma histogram has the highest entropy (the most varied tones).
    case entropy

    /// The `size` window of `image` to keep; `size` must fit inside the image.
    public func window(in image: ImageBuffer, size: Size) -> Rect {
        let spareX = image.width - size.width, spareY = image.height - size.height
        precondition(spareX >= 0 && spareY >= 0, "the crop is larger than the image")
        let centred = Rect(x: spareX / 2, y: spareY / 2, width: size.width, height: size.height)
        guard self == .attention || self == .entropy, spareX + spareY > 0 else { return centred }
        let luma = Self.luma(of: image)
        let horizontal = spareX > 0, spare = horizontal ? spareX : spareY
        let length = horizontal ? size.width : size.height
        let offset: Int
        if self == .attention {
            offset = Self.bestWindow(profile: Self.edgeProfile(luma, width: image.width, height: image.height,
                                                                alongX: horizontal), length: length)
        } else {
            offset = Self.mostVariedWindow(luma, width: image.width, height: image.height, size: size,
                                           alongX: horizontal, spare: spare)
        }
        return horizontal ? Rect(x: offset, y: centred.y, width: size.width, height: size.height)
            : Rect(x: centred.x, y: offset, width: size.width, height: size.height)
    }

    /// 8-bit luma of every pixel (Rec. 601), alpha ignored.
    private static func luma(of image: ImageBuffer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: image.width * image.height)
        let shift = image.format.bitDepth == 16 ? 8 : 0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = image.pixel(x: x, y: y).map { $0 >> shift }
                out[y * image.width + x] = UInt8(image.format.isColor ? Tessera.luma(p[0], p[1], p[2]) : p[0])
            }
        }
        return out
    }

    /// Edge energy summed across the axis the window does not slide along: one value per column (or row).
    private static func edgeProfile(_ luma: [UInt8], width: Int, height: Int, alongX: Bool) -> [Int] {
        var profile = [Int](repeating: 0, count: alongX ? width : height)
        for y in 0..<height {
            for x in 0..<width {
                let here = Int(luma[y * width + x])
                let dx = x + 1 < width ? abs(Int(luma[y * width + x + 1]) - here) : 0
                let dy = y + 1 < height ? abs(Int(luma[(y + 1) * width + x]) - here) : 0
                profile[alongX ? x : y] += dx + dy
            }
        }
        return profile
    }

    /// The start of the `length`-long run of `profile` with the largest sum; ties go to the run nearest the middle.
    private static func bestWindow(profile: [Int], length: Int) -> Int {
        let spare = profile.count - length, middle = spare / 2
        var sum = profile[0..<length].reduce(0, +), best = 0, bestSum = sum
        for start in 1..<spare + 1 {
            sum += profile[start + length - 1] - profile[start - 1]
            if sum > bestSum || (sum == bestSum && abs(start - middle) < abs(best - middle)) {
                best = start
                bestSum = sum
            }
        }
        return best
    }

    /// The window offset, among up to 33 evenly spaced ones, whose luma histogram has the highest entropy.
    private static func mostVariedWindow(_ luma: [UInt8], width: Int, height: Int, size: Size, alongX: Bool,
                                         spare: Int) -> Int {
        let candidates = Array(Set((0...32).map { spare * $0 / 32 })).sorted()
        var best = spare / 2, bestEntropy = -1.0
        var histogram = [Int](repeating: 0, count: 256)
        for start in candidates {
            for index in histogram.indices { histogram[index] = 0 }
            let x0 = alongX ? start : (width - size.width) / 2, y0 = alongX ? (height - size.height) / 2 : start
            for y in y0..<y0 + size.height {
                for x in x0..<x0 + size.width { histogram[Int(luma[y * width + x])] += 1 }
            }
            let total = Double(size.area)
            let entropy = histogram.reduce(0.0) { sum, count in
                count == 0 ? sum : sum - Double(count) / total * log2(Double(count) / total)
            }
            if entropy > bestEntropy + 1e-12 || (abs(entropy - bestEntropy) <= 1e-12 && abs(start - spare / 2) < abs(best - spare / 2)) {
                best = start
                bestEntropy = entropy
            }
        }
        return best
    }
}
