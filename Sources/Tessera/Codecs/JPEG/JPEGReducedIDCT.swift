/// libjpeg's inverse DCTs for 1/8 of the size (`jpeg_idct_1x1` and `jpeg_idct_2x2` in jidctred.c), bit for bit:
/// what it scales a component by when decoding at 1/8, a full-sampled component by 1x1 and a component sampled
/// at half of the largest factor both ways (4:2:0 chroma) by 2x2. Coefficients are in natural order, and
/// `quantization` is the component's table in natural order (libjpeg's ISLOW multipliers are its values). The
/// arithmetic wraps rather than traps: 16-bit coefficients times 16-bit factors times 15-bit constants stay far
/// inside 64 bits.
enum JPEGReducedIDCT {
    /// The sample of a 1x1 IDCT: the block's dequantised DC descaled by 8 (its mean), centred and range-limited.
    @inline(__always)
    static func oneByOne(dc: Int16, quantization: Int) -> UInt8 {
        limit((Int(dc) &* quantization &+ 4) >> 3)
    }

    /// The 2x2 samples of a block into `output` (row 0) and `output + stride` (row 1).
    static func twoByTwo(_ block: UnsafePointer<Int16>, quantization: UnsafePointer<Int>,
                         into output: UnsafeMutablePointer<UInt8>, stride: Int) {
        @inline(__always) func dequantised(_ index: Int) -> Int { Int(block[index]) &* quantization[index] }
        if !hasTwoByTwoTerms(block) {
            // The DC alone: both passes' odd parts are zero, and the four samples are the DC rounded twice.
            let shift1 = constBits - pass1Bits + 2, shift2 = constBits + pass1Bits + 3 + 2
            let work = ((dequantised(0) << (constBits + 2)) &+ (1 << (shift1 - 1))) >> shift1
            let sample = limit(((work << (constBits + 2)) &+ (1 << (shift2 - 1))) >> shift2)
            output[0] = sample
            output[1] = sample
            output[stride] = sample
            output[stride &+ 1] = sample
            return
        }
        // Pass 1, columns 0, 1, 3, 5 and 7 (the even ones cancel in a 2-point output) into two work rows.
        var top = (0, 0, 0, 0, 0), bottom = (0, 0, 0, 0, 0)
        @inline(__always) func column(_ c: Int) -> (Int, Int) {
            let even = dequantised(c) << (constBits + 2)
            let odd = odd(dequantised(56 + c), dequantised(40 + c), dequantised(24 + c), dequantised(8 + c))
            let shift = constBits - pass1Bits + 2
            return ((even &+ odd &+ (1 << (shift - 1))) >> shift, (even &- odd &+ (1 << (shift - 1))) >> shift)
        }
        (top.0, bottom.0) = column(0)
        (top.1, bottom.1) = column(1)
        (top.2, bottom.2) = column(3)
        (top.3, bottom.3) = column(5)
        (top.4, bottom.4) = column(7)
        // Pass 2, each work row into two samples.
        @inline(__always) func row(_ w: (Int, Int, Int, Int, Int), into target: UnsafeMutablePointer<UInt8>) {
            let even = w.0 << (constBits + 2), odd = odd(w.4, w.3, w.2, w.1)
            let shift = constBits + pass1Bits + 3 + 2
            target[0] = limit((even &+ odd &+ (1 << (shift - 1))) >> shift)
            target[1] = limit((even &- odd &+ (1 << (shift - 1))) >> shift)
        }
        row(top, into: output)
        row(bottom, into: output + stride)
    }

    /// Whether any coefficient but the DC that the 2x2 IDCT reads (rows and columns 0, 1, 3, 5 and 7) is set.
    @inline(__always)
    private static func hasTwoByTwoTerms(_ block: UnsafePointer<Int16>) -> Bool {
        @inline(__always) func row(_ start: Int) -> Int16 {
            block[start] | block[start &+ 1] | block[start &+ 3] | block[start &+ 5] | block[start &+ 7]
        }
        return (block[1] | block[3] | block[5] | block[7] | row(8) | row(24) | row(40) | row(56)) != 0
    }

    /// The odd part of the 2-point IDCT from the terms 7, 5, 3 and 1 (jidctred.c's constants, 13-bit fixed point).
    @inline(__always)
    private static func odd(_ seven: Int, _ five: Int, _ three: Int, _ one: Int) -> Int {
        seven &* -5906 &+ five &* 6967 &+ three &* -10426 &+ one &* 29692
    }

    private static let constBits = 13
    private static let pass1Bits = 2

    /// libjpeg's post-IDCT range limit (jdmaster.c's table, indexed by the value's low ten bits): `value + 128`
    /// clamped to 0...255 for values from -512 to 511, and wrapping beyond as the table does.
    @inline(__always)
    static func limit(_ value: Int) -> UInt8 {
        // The low ten bits as a signed number (-512...511), plus 128, clamped: no branch.
        UInt8(truncatingIfNeeded: min(max((value &<< 54) &>> 54 &+ 128, 0), 255))
    }
}
