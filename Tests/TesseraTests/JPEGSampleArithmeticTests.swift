import Testing
@testable import Tessera

/// The arithmetic the 1/8 rows and the DC-only decoder share with libjpeg, against jdcolor.c's and jdmaster.c's
/// tables as libjpeg builds them: the YCbCr conversion for every chroma pair, and the range limit for every value.
@Suite struct JPEGSampleArithmeticTests {
    /// jdcolor.c's conversion of one pixel through its tables (Cr_r_tab, Cb_b_tab, Cr_g_tab, Cb_g_tab) and its
    /// range-limit table.
    static func libjpegRGB(y: Int, cb: Int, cr: Int) -> [UInt8] {
        func fixed(_ value: Double) -> Int { Int(value * 65536 + 0.5) }
        let red = (fixed(1.402) * (cr - 128) + 32768) >> 16
        let blue = (fixed(1.772) * (cb - 128) + 32768) >> 16
        let green = (-fixed(0.34414) * (cb - 128) + 32768 - fixed(0.71414) * (cr - 128)) >> 16
        return [y + red, y + green, y + blue].map { UInt8(max(0, min(255, $0))) }
    }

    @Test func yCbCrEqualsLibjpegsTablesForEveryChromaPair() {
        // 256 x 256 chroma pairs at each of these luma levels, converted 19 pixels a call so that the 8-pixel steps
        // and the pixel-by-pixel tail both run.
        for y in [0, 1, 77, 128, 200, 254, 255] {
            var mismatches = 0
            for cb in 0..<256 {
                let count = 256
                let luma = [UInt8](repeating: UInt8(y), count: count)
                let blue = [UInt8](repeating: UInt8(cb), count: count)
                let red = (0..<count).map { UInt8($0) }
                var output = [UInt8](repeating: 0, count: 3 * count)
                for start in stride(from: 0, to: count, by: 19) {
                    let length = min(19, count - start)
                    luma.withUnsafeBufferPointer { luma in
                        blue.withUnsafeBufferPointer { blue in
                            red.withUnsafeBufferPointer { red in
                                output.withUnsafeMutableBufferPointer { output in
                                    JPEGYCbCr.convert(luma: luma.baseAddress! + start, blue: blue.baseAddress! + start,
                                                      red: red.baseAddress! + start, count: length,
                                                      into: output.baseAddress! + 3 * start)
                                }
                            }
                        }
                    }
                }
                for cr in 0..<count where Array(output[3 * cr..<3 * cr + 3]) != Self.libjpegRGB(y: y, cb: cb, cr: cr) {
                    mismatches += 1
                }
            }
            #expect(mismatches == 0, "luma \(y)")
        }
    }

    @Test func rangeLimitWrapsAsLibjpegsTable() {
        // jdmaster.c's table seen through an index masked to ten bits: 128...255 for 0...127, then 255 up to 511,
        // 0 from 512 to 895, and 0...127 for 896...1023.
        func table(_ value: Int) -> UInt8 {
            let index = value & 1023
            if index < 128 { return UInt8(index + 128) }
            if index < 512 { return 255 }
            if index < 896 { return 0 }
            return UInt8(index - 896)
        }
        let mismatches = (-5000...5000).filter { JPEGReducedIDCT.limit($0) != table($0) }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
