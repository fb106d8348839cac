/// libjpeg's YCbCr to RGB conversion (jdcolor.c), bit for bit: its 16-bit fixed-point factors, rounded as it rounds
/// them, computed eight pixels at a time rather than read from its tables.
enum JPEGYCbCr {
    /// Converts `count` pixels of luma, Cb and Cr samples into interleaved RGB at `output`.
    static func convert(luma: UnsafePointer<UInt8>, blue: UnsafePointer<UInt8>, red: UnsafePointer<UInt8>, count: Int,
                        into output: UnsafeMutablePointer<UInt8>) {
        var x = 0
        while x + 8 <= count {
            let (r, g, b) = rgb(y: load(luma + x), cb: load(blue + x), cr: load(red + x))
            for lane in 0..<8 {
                output[3 &* (x &+ lane)] = UInt8(truncatingIfNeeded: r[lane])
                output[3 &* (x &+ lane) &+ 1] = UInt8(truncatingIfNeeded: g[lane])
                output[3 &* (x &+ lane) &+ 2] = UInt8(truncatingIfNeeded: b[lane])
            }
            x += 8
        }
        while x < count {
            let (r, g, b) = rgb(y: SIMD8(repeating: Int32(luma[x])), cb: SIMD8(repeating: Int32(blue[x])),
                                cr: SIMD8(repeating: Int32(red[x])))
            output[3 &* x] = UInt8(truncatingIfNeeded: r[0])
            output[3 &* x &+ 1] = UInt8(truncatingIfNeeded: g[0])
            output[3 &* x &+ 2] = UInt8(truncatingIfNeeded: b[0])
            x += 1
        }
    }

    @inline(__always)
    private static func load(_ samples: UnsafePointer<UInt8>) -> SIMD8<Int32> {
        SIMD8<Int32>(truncatingIfNeeded: UnsafeRawPointer(samples).loadUnaligned(as: SIMD8<UInt8>.self))
    }

    /// jdcolor.c's sums: R = Y + Cr_r(Cr), G = Y + (Cb_g(Cb) + Cr_g(Cr)) >> 16, B = Y + Cb_b(Cb), each table entry
    /// a factor times the chroma less 128, the R and B ones rounded and shifted, the G ones summed first; then
    /// clamped to 0...255, as its range-limit table does for these sums.
    @inline(__always)
    private static func rgb(y: SIMD8<Int32>, cb: SIMD8<Int32>, cr: SIMD8<Int32>)
        -> (SIMD8<Int32>, SIMD8<Int32>, SIMD8<Int32>) {
        let half = SIMD8<Int32>(repeating: 1 << 15), low = SIMD8<Int32>(repeating: 0), high = SIMD8<Int32>(repeating: 255)
        let blue = cb &- 128, red = cr &- 128
        let r = y &+ ((red &* redFromCr &+ half) &>> 16)
        let g = y &+ ((blue &* greenFromCb &+ half &+ red &* greenFromCr) &>> 16)
        let b = y &+ ((blue &* blueFromCb &+ half) &>> 16)
        return (r.clamped(lowerBound: low, upperBound: high), g.clamped(lowerBound: low, upperBound: high),
                b.clamped(lowerBound: low, upperBound: high))
    }

    /// jdcolor.c's FIX(1.40200), FIX(1.77200), -FIX(0.34414) and -FIX(0.71414): x * 65536, rounded (literals, so
    /// the loop loads no global).
    private static var redFromCr: SIMD8<Int32> { SIMD8(repeating: 91_881) }
    private static var blueFromCb: SIMD8<Int32> { SIMD8(repeating: 116_130) }
    private static var greenFromCb: SIMD8<Int32> { SIMD8(repeating: -22_554) }
    private static var greenFromCr: SIMD8<Int32> { SIMD8(repeating: -46_802) }
}
