import COpenJPEG

/// Which of a JPEG 2000 image's components become which channel of Tessera's pixels, and how: the first colour
/// component (gray) or the first three (RGB), opacity from a component the file marks as alpha (or, with none
/// marked, the last of two or four, as `opj_decompress` writes PNGs), samples of up to 8 bits widened to 8 and
/// deeper ones to 16, and sYCC turned into RGB as `opj_decompress` does.
struct JPEG2000Channels: Equatable {
    /// The output pixels.
    var format: PixelFormat
    /// For each output channel, in order, the component it comes from.
    var components: [Int]
    /// Whether the three colour components are sYCC to convert to RGB (4:4:4, 4:2:2 or 4:2:0 only).
    var convertsYCC: Bool

    /// `precisions` and `alpha` describe each component (after a palette); `sYCC` whether the file declares or
    /// implies sYCC (see `impliesYCC`).
    init(precisions: [Int], alpha: [Bool], sYCC: Bool) {
        var alphaIndex = alpha.firstIndex(of: true)
        if alphaIndex == nil && (precisions.count == 2 || precisions.count == 4) { alphaIndex = precisions.count - 1 }
        let colours = precisions.indices.filter { $0 != alphaIndex && !alpha[$0] }
        let colourComponents = Array(colours.prefix(colours.count >= 3 ? 3 : 1))
        components = colourComponents + (alphaIndex.map { [$0] } ?? [])
        let channels: PixelFormat.Channels = colourComponents.count == 3
            ? (alphaIndex == nil ? .rgb : .rgba) : (alphaIndex == nil ? .gray : .grayAlpha)
        let precision = components.map { precisions[$0] }.max() ?? 8
        format = PixelFormat(channels, bitDepth: precision <= 8 ? 8 : 16)
        convertsYCC = sYCC && colourComponents == [0, 1, 2]
    }

    /// Whether an image is sYCC as `opj_decompress` takes it: declared so, or three components whose second is
    /// subsampled horizontally (a codestream's 4:2:0 or 4:2:2 without a colour box).
    static func impliesYCC(_ image: opj_image_t) -> Bool {
        if image.color_space == OPJ_CLRSPC_SYCC { return true }
        guard image.numcomps == 3 else { return false }
        return image.comps[0].dx == image.comps[0].dy && image.comps[1].dx != 1
    }

    /// Whether sYCC components have a layout `opj_decompress` converts: 4:4:4, 4:2:2 or 4:2:0 with full-size luma.
    static func convertibleYCC(_ image: opj_image_t) -> Bool {
        let c = image.comps!
        guard c[0].dx == 1, c[0].dy == 1, c[1].dx == c[2].dx, c[1].dy == c[2].dy, c[0].prec == c[1].prec,
              c[0].prec == c[2].prec else { return false }
        return (c[1].dx == 1 && c[1].dy == 1) || (c[1].dx == 2 && (c[1].dy == 1 || c[1].dy == 2))
    }

    /// Converts one sYCC sample to RGB at precision `bits`, as `opj_decompress`'s color.c does (the same
    /// single-precision products, truncated, then clamped).
    @inline(__always)
    static func rgb(y: Int32, cb: Int32, cr: Int32, bits: Int) -> (Int32, Int32, Int32) {
        let offset = Int32(1) << (bits - 1), upper = (Int32(1) << bits) - 1
        let cb = Float(cb - offset), cr = Float(cr - offset)
        let r = y + Int32(1.402 * Double(cr))
        let g = y - Int32(0.344 * Double(cb) + 0.714 * Double(cr))
        let b = y + Int32(1.772 * Double(cb))
        return (min(max(r, 0), upper), min(max(g, 0), upper), min(max(b, 0), upper))
    }
}
