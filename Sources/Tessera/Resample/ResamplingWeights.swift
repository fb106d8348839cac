/// Precomputed weights for resampling one axis from `inputLength` to `outputLength` pixels: for each output
/// pixel, the first source pixel and `taps` weights (zero-padded, so the inner loop has a fixed length and no
/// branches). Source pixels outside the image are left out and the rest renormalised, as Pillow does.
public struct ResamplingWeights: Sendable {
    /// Weights per output pixel (the widest window; shorter windows are padded with zeros).
    public let taps: Int
    /// For output pixel `i`, the first source pixel of its window; `first[i] + taps <= inputLength`.
    public let first: [Int]
    /// `taps` weights per output pixel, output pixel `i` at `i * taps`; each group sums to 1.
    public let weights: [Float]
    /// The run of source pixels the weights copy, if they only copy (`Run`); nil when any output pixel is a sum.
    let run: Run?

    /// Output pixel `i`'s centre sits at source coordinate `(i + 0.5) * scale - 0.5 + lag` with
    /// `scale = inputLength / outputLength` unless given (source pixels per output pixel), the libvips and Pillow
    /// convention when `lag` is 0; `lag` (in source pixels) is how far the source's pixels lie before the centres
    /// of the areas they stand for (`ImageSource.sampleLag`), or where a window starts inside its first pixel.
    public init(kernel: ResamplingKernel, inputLength: Int, outputLength: Int, scale: Double? = nil, lag: Double = 0) {
        precondition(inputLength > 0 && outputLength > 0, "lengths must be positive")
        let scale = scale ?? Double(inputLength) / Double(outputLength)
        let stretch = kernel.stretchesWhenShrinking ? max(1, scale) : 1
        let radius = kernel.support * stretch
        // Each window's source pixels within the radius, less the kernel's zeros at its ends (an interpolating
        // kernel's at whole-pixel offsets: an axis kept at its length is one tap, not six); the widest sets the
        // taps for all. A window of zeros keeps its span, which holds the pixel closest to its centre (below).
        // Every window's weights go in `values`, window `i`'s from `i * widest`: its span's, then the kernel's
        // beyond it (not used); `offset` is where its `low` is.
        let widest = Int(2 * radius) + 2
        let centres = UnsafeMutableBufferPointer<Double>.allocate(capacity: outputLength)
        let firsts = UnsafeMutableBufferPointer<Double>.allocate(capacity: outputLength)
        let spans = UnsafeMutableBufferPointer<(low: Int, high: Int)>.allocate(capacity: outputLength)
        // Where each window's `low` is in `values`; -1 for a window of zeros.
        let offsets = UnsafeMutableBufferPointer<Int>.allocate(capacity: outputLength)
        let values = UnsafeMutableBufferPointer<Double>.allocate(capacity: outputLength * widest)
        defer {
            centres.deallocate()
            firsts.deallocate()
            spans.deallocate()
            offsets.deallocate()
            values.deallocate()
        }
        // Distances in the kernel's pixels: a multiplication a window, not a division.
        let step = 1 / stretch
        for i in 0..<outputLength {
            let centre = (Double(i) + 0.5) * scale - 0.5 + lag
            let low = max(0, Int((centre - radius).rounded(.up)))
            centres[i] = centre
            spans[i] = (low, min(inputLength - 1, Int((centre + radius).rounded(.down))))
            firsts[i] = (Double(low) - centre) * step
        }
        kernel.weights(from: UnsafeBufferPointer(firsts), step: step, into: values)
        var taps = 1
        for i in 0..<outputLength {
            let spanLow = spans[i].low, window = values.baseAddress! + i &* widest
            func negligible(_ source: Int) -> Bool { abs(window[source &- spanLow]) < 1e-9 }
            var (low, high) = spans[i]
            while low < high, negligible(low) { low &+= 1 }
            while high > low, negligible(high) { high &-= 1 }
            if negligible(low) {
                offsets[i] = -1
            } else {
                spans[i] = (low, high)
                offsets[i] = i &* widest &+ low &- spanLow
            }
            taps = max(taps, spans[i].high &- spans[i].low &+ 1)
        }
        var first = [Int](repeating: 0, count: outputLength)
        var weights = [Float](repeating: 0, count: outputLength * taps)
        first.withUnsafeMutableBufferPointer { first in
            weights.withUnsafeMutableBufferPointer { weights in
                for i in 0..<outputLength {
                    let (low, high) = spans[i], offset = offsets[i]
                    let start = max(0, min(low, inputLength - taps)), window = weights.baseAddress! + i &* taps
                    first[i] = start
                    // The span's values (none past the input's end), and where they go in the window. A window of
                    // zeros sums to next to nothing, which would make its pixels' rounding errors weights.
                    let count = offset >= 0 ? max(0, high &- low &+ 1) : 0
                    let span = values.baseAddress! + max(0, offset), target = window + (low &- start)
                    var total = 0.0
                    for k in 0..<count { total += span[k] }
                    if total == 0 {
                        // A window that misses every pixel (nearest at an exact midpoint) takes the closest one.
                        window[min(max(Int(centres[i].rounded()), 0), inputLength - 1) &- start] = 1
                        continue
                    }
                    // One division a window: each weight's own would wait on the one before (as often as not
                    // the same Float).
                    let scale = 1 / total
                    for k in 0..<count { target[k] = Float(span[k] * scale) }
                }
            }
        }
        self.taps = taps
        self.first = first
        self.weights = weights
        run = Self.run(first: first, weights: weights, taps: taps)
        isIdentity = inputLength == outputLength && taps == 1 && first.elementsEqual(0..<outputLength)
            && weights.allSatisfy { $0 == 1 }
    }

    /// Weights that take output pixel `i` as it is from source pixel `start + min(i, count - 1)`: a length kept
    /// (shifted by `start`), its last pixel repeated past `count` (a level halved rounding down lost the image's
    /// last pixel).
    struct Run: Sendable {
        let start: Int, count: Int
    }

    /// The run the weights pick, if they are one: each output pixel a single weight of 1 among zeros, on source
    /// pixels one after another, then the last of them again; else nil.
    private static func run(first: [Int], weights: [Float], taps: Int) -> Run? {
        weights.withUnsafeBufferPointer { values in
            var start = 0, count = 0
            for (index, first) in first.enumerated() {
                let window = values.baseAddress! + index &* taps
                guard let one = (0..<taps).first(where: { window[$0] != 0 }), window[one] == 1,
                      (one + 1..<taps).allSatisfy({ window[$0] == 0 }) else { return nil }
                let source = first + one
                if index == 0 {
                    start = source
                    count = 1
                } else if source == start + count, count == index {
                    count += 1
                } else if source != start + count - 1 {
                    return nil
                }
            }
            return Run(start: start, count: count)
        }
    }

    /// Whether every output pixel is its source pixel (a length kept, unshifted, by an interpolating kernel).
    public let isIdentity: Bool

    /// The weights for `kernel` from `inputLength` to `outputLength`, made once per process for a built-in kernel
    /// and kept (at most `sharedByteLimit` bytes of them, least recently used dropped): a server's renders ask for
    /// the same few pairs of lengths again and again (a tile a pixel or two off its level, the tiles of an edge
    /// column), and new weights cost more than the resampling they serve (a 90-pixel thumbnail's four axes took
    /// 16-18 us in a server, its loops 10). Another kernel's are made each time, and so are a whole image's
    /// thumbnails' (`JPEGPlanes.resampled`), whose lengths are the image's own.
    public static func shared(kernel: ResamplingKernel, inputLength: Int, outputLength: Int, scale: Double? = nil,
                              lag: Double = 0) -> ResamplingWeights {
        let make = { Self(kernel: kernel, inputLength: inputLength, outputLength: outputLength, scale: scale, lag: lag) }
        guard kernel.isBuiltIn,
              let weights = try? sharedWeights.value(
                  for: SharedKey(kernel: kernel.name, input: inputLength, output: outputLength, scale: scale, lag: lag),
                  make: make)
        else { return make() }
        return weights
    }

    /// The most memory the shared weights hold: 4 MiB, a few hundred tiles' axes.
    static let sharedByteLimit = 4 << 20

    private struct SharedKey: Hashable, Sendable {
        let kernel: String, input: Int, output: Int, scale: Double?, lag: Double
    }

    private static let sharedWeights = SharedCache<SharedKey, ResamplingWeights>(byteLimit: sharedByteLimit) { _, weights in
        weights.weights.count * MemoryLayout<Float>.stride + weights.first.count * MemoryLayout<Int>.stride + 64
    }
}
