import CCodecShims
import CJPEG

/// Cuts a JPEG down to its top-left corner without decoding it, as `jpegtran -crop WxH+0+0` does: the quantised
/// coefficients of the blocks inside the corner are copied into a new JPEG with the same tables, so the pixels are
/// those stored. This is how a pyramid's padded edge tile is sent at its real size with no decode and no encode.
enum JPEGLosslessCrop {
    /// The top-left `size` of `jpeg` (a complete JPEG file, at least that large) as a JPEG file.
    static func topLeft(of jpeg: [UInt8], size: Size, name: String) throws -> [UInt8] {
        let session = try JPEGSession(input: .bytes(jpeg, name: name))
        let info = session.info.pointee
        guard size.width >= 1, size.height >= 1, size.width <= Int(info.image_width),
              size.height <= Int(info.image_height) else {
            throw TesseraError.invalidArgument("\(name): cannot crop a \(info.image_width)x\(info.image_height) JPEG to \(size)")
        }
        try session.check(tessera_jpeg_read_coefficients(session.decoder), during: "reading coefficients")
        guard let encoder = tessera_jpeg_encoder_create() else {
            throw TesseraError.io(path: name, detail: "cannot create a JPEG encoder")
        }
        defer { tessera_jpeg_encoder_destroy(encoder) }
        func check(_ status: Int32) throws {
            guard status == 0 else { return }
            let message = String(cString: tessera_jpeg_encoder_message(encoder))
            throw TesseraError.corrupt(path: name, detail: "\(message) (while cropping coefficients)")
        }
        try check(tessera_jpeg_encoder_setup_coefficients(encoder, session.decoder, JDIMENSION(size.width),
                                                          JDIMENSION(size.height)))
        let target = tessera_jpeg_encoder_info(encoder)!.pointee
        var maxHorizontal = 1, maxVertical = 1
        for component in 0..<Int(target.num_components) {
            maxHorizontal = max(maxHorizontal, Int(target.comp_info[component].h_samp_factor))
            maxVertical = max(maxVertical, Int(target.comp_info[component].v_samp_factor))
        }
        // Whole MCUs of the corner: the arrays both sides hold, the source's being at least as large.
        let mcusAcross = (size.width + 8 * maxHorizontal - 1) / (8 * maxHorizontal)
        let mcusDown = (size.height + 8 * maxVertical - 1) / (8 * maxVertical)
        for component in 0..<Int(target.num_components) {
            let horizontal = Int(target.comp_info[component].h_samp_factor)
            let vertical = Int(target.comp_info[component].v_samp_factor)
            for row in 0..<mcusDown * vertical {
                guard let to = tessera_jpeg_encoder_block_row(encoder, Int32(component), JDIMENSION(row)) else {
                    try check(0)
                    return []
                }
                guard let from = tessera_jpeg_decoder_block_row(session.decoder, Int32(component), JDIMENSION(row)) else {
                    try session.check(0, during: "reading coefficients")
                    return []
                }
                UnsafeMutableRawPointer(to).copyMemory(from: from, byteCount: mcusAcross * horizontal * 128)
            }
        }
        try check(tessera_jpeg_finish_compress(encoder))
        var count: UInt = 0
        let output = tessera_jpeg_encoder_output(encoder, &count)
        return Array(UnsafeBufferPointer(start: output, count: Int(count)))
    }
}
