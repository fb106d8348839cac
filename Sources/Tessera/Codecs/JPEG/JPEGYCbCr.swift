/// libjpeg's YCbCr to RGB conversion (jdcolor.c), bit for bit: 16-bit fixed-point tables, rounded as it rounds.
enum JPEGYCbCr {
    /// Converts `count` pixels of luma, Cb and Cr samples into interleaved RGB at `output`.
    static func convert(luma: UnsafePointer<UInt8>, blue: UnsafePointer<UInt8>, red: UnsafePointer<UInt8>, count: Int,
                        into output: UnsafeMutablePointer<UInt8>) {
        redFromCr.withUnsafeBufferPointer { redFromCr in
            blueFromCb.withUnsafeBufferPointer { blueFromCb in
                greenFromCb.withUnsafeBufferPointer { greenFromCb in
                    greenFromCr.withUnsafeBufferPointer { greenFromCr in
                        for x in 0..<count {
                            let y = Int(luma[x]), cb = Int(blue[x]), cr = Int(red[x])
                            output[3 &* x] = clamp(y &+ redFromCr[cr])
                            output[3 &* x &+ 1] = clamp(y &+ (greenFromCb[cb] &+ greenFromCr[cr]) >> 16)
                            output[3 &* x &+ 2] = clamp(y &+ blueFromCb[cb])
                        }
                    }
                }
            }
        }
    }

    @inline(__always)
    private static func clamp(_ value: Int) -> UInt8 { UInt8(max(0, min(255, value))) }

    private static func fixed(_ value: Double) -> Int { Int(value * 65536 + 0.5) }
    private static let redFromCr = (0..<256).map { (fixed(1.402) * ($0 - 128) + 32768) >> 16 }
    private static let blueFromCb = (0..<256).map { (fixed(1.772) * ($0 - 128) + 32768) >> 16 }
    private static let greenFromCr = (0..<256).map { -fixed(0.71414) * ($0 - 128) }
    private static let greenFromCb = (0..<256).map { -fixed(0.34414) * ($0 - 128) + 32768 }
}
