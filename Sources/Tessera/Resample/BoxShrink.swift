/// 8-bit samples (a window of a plane) averaged over boxes of `across` x `down` samples (powers of two), halving by
/// 2 x 2 averages (or 2 x 1, 1 x 2) rounded to nearest until the boxes are that size: the first step of a shrink by
/// two or more in the planes (`JPEGPlanes.resampled`), after which the kernel shrinks by less than two, as libvips
/// shrinks before its kernel. A box's average stands at its centre, `across` and `down` samples from the next; a
/// halving's odd last column or row is averaged with itself, so no sample past the window is read.
struct BoxShrink {
    /// Samples per box across and down: powers of two, 1 for an axis kept as it is.
    let across: Int, down: Int

    /// The box for a shrink by `scale` source samples per output sample of a window `samples` long: the largest
    /// power of two at most `scale` (1 under a shrink by two), which leaves the kernel a shrink of at least 1 and
    /// under 2, and at most the window (a sample alone is its own average).
    static func factor(for scale: Double, samples: Int) -> Int {
        var factor = 1
        while scale >= Double(2 * factor), 2 * factor <= samples { factor *= 2 }
        return factor
    }

    /// Calls `body` with the `width` x `height` samples at `source` (rows `stride` apart) averaged over the boxes:
    /// where they are, their rows' stride, their width and height; with the samples as they are when both sides
    /// are 1.
    func withSamples<Result>(_ source: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int,
                             _ body: (UnsafePointer<UInt8>, _ stride: Int, _ width: Int, _ height: Int) -> Result)
        -> Result {
        guard across > 1 || down > 1, width > 0, height > 0 else { return body(source, stride, width, height) }
        // Two buffers the halvings go back and forth between, each large enough for the first.
        let firstSize = (across > 1 ? (width + 1) / 2 : width) * (down > 1 ? (height + 1) / 2 : height)
        let buffers = UnsafeMutablePointer<UInt8>.allocate(capacity: 2 * firstSize)
        defer { buffers.deallocate() }
        var samples = source, rowStride = stride, size = (width: width, height: height), target = buffers
        var (acrossLeft, downLeft) = (across, down)
        while acrossLeft > 1 || downLeft > 1 {
            size = Self.halve(samples, stride: rowStride, width: size.width, height: size.height,
                              across: acrossLeft > 1, down: downLeft > 1, into: target)
            samples = UnsafePointer(target)
            rowStride = size.width
            target = target == buffers ? buffers + firstSize : buffers
            acrossLeft = max(1, acrossLeft / 2)
            downLeft = max(1, downLeft / 2)
        }
        return body(samples, rowStride, size.width, size.height)
    }

    /// `width` x `height` samples (rows `stride` apart) averaged in pairs across, down or both into `target` (rows
    /// packed), rounded to nearest; returns the size written.
    private static func halve(_ source: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int, across: Bool,
                              down: Bool, into target: UnsafeMutablePointer<UInt8>) -> (width: Int, height: Int) {
        let outWidth = across ? (width + 1) / 2 : width, outHeight = down ? (height + 1) / 2 : height
        for y in 0..<outHeight {
            let top = source + (down ? 2 &* y : y) &* stride
            let bottom = down ? source + Swift.min(2 &* y &+ 1, height &- 1) &* stride : top
            let output = target + y &* outWidth
            if across {
                // Sixteen pairs at a time: each pair of samples read as one 16-bit lane, whose two bytes (low and
                // high, in either order) are the pair's samples, summed across and down in those lanes (at most
                // 4 x 255). No bytes are shuffled apart: about half the instructions of widening each row.
                // The last sixteen overlap those before rather than leave up to fifteen pairs to the scalar loop
                // (a 59-pair chroma row's eleven): they are written again with the same values.
                let pairs = width / 2
                @inline(__always) func sixteen(from x: Int) {
                    let upper = UnsafeRawPointer(top + 2 &* x).loadUnaligned(as: SIMD16<UInt16>.self)
                    let lower = UnsafeRawPointer(bottom + 2 &* x).loadUnaligned(as: SIMD16<UInt16>.self)
                    let sums = (upper & 0xFF) &+ (upper &>> 8) &+ (lower & 0xFF) &+ (lower &>> 8) &+ 2
                    UnsafeMutableRawPointer(output + x).storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: sums &>> 2),
                                                                   as: SIMD16<UInt8>.self)
                }
                var x = 0
                while x &+ 16 <= pairs {
                    sixteen(from: x)
                    x &+= 16
                }
                if x < pairs, pairs >= 16 {
                    sixteen(from: pairs &- 16)
                    x = pairs
                }
                for x in x..<pairs {
                    let left = 2 &* x
                    let sum = UInt16(top[left]) &+ UInt16(top[left &+ 1]) &+ UInt16(bottom[left]) &+ UInt16(bottom[left &+ 1])
                    output[x] = UInt8(truncatingIfNeeded: (sum &+ 2) &>> 2)
                }
                if pairs < outWidth {
                    let last = width &- 1
                    output[pairs] = UInt8(truncatingIfNeeded: (UInt16(top[last]) &+ UInt16(bottom[last]) &+ 1) &>> 1)
                }
            } else {
                for x in 0..<width {
                    output[x] = UInt8(truncatingIfNeeded: (UInt16(top[x]) &+ UInt16(bottom[x]) &+ 1) &>> 1)
                }
            }
        }
        return (outWidth, outHeight)
    }
}
