import COpenJPEG
import Foundation

/// One OpenJPEG decompressor over a file, its main header read: the image it describes (components, sizes,
/// colour space, ICC profile), the codestream's structure, and decoding of an area at a resolution. OpenJPEG's
/// messages are kept, never printed, and its failures become `TesseraError`s naming the file. Used by one thread
/// at a time: `JPEG2000Codestream` lends it to one read, then keeps it for the next.
final class JPEG2000Codec: @unchecked Sendable {
    /// Whether the file is a JP2-family file (boxes around the codestream) or a raw codestream.
    enum Container {
        case jp2, codestream
    }

    let source: JPEG2000ByteSource
    private let codec: UnsafeMutablePointer<opj_codec_t?>
    private let stream: UnsafeMutablePointer<opj_stream_t?>
    /// The image as the header describes it; after `decode` it holds the decoded area's samples.
    let image: UnsafeMutablePointer<opj_image_t>
    /// The error messages OpenJPEG reports, kept for the error thrown.
    private let messages = OpenJPEGMessages()
    /// Whether `decode` ran: OpenJPEG decodes one area per decompressor, except for single-tile images, whereas
    /// `decodeTile` may be called any number of times, in any order of tiles and reductions.
    private(set) var hasDecoded = false

    /// Reads the main header of `source`, for areas decoded at `reduction` (resolution levels discarded; whole
    /// tiles say their own), reading ahead by `readAhead`. OpenJPEG decodes on the calling thread only: Tessera's
    /// parallelism is its callers' (the server's requests, one decoder each), and a thread pool per decompressor
    /// cost the server half its tiles per second.
    init(source: JPEG2000ByteSource, container: Container, reduction: Int = 0,
         readAhead: JPEG2000ByteSource.ReadAhead = .tiles) throws {
        try CodecLibrary.openJPEG.require()
        self.source = source
        guard let codec = opj_create_decompress(container == .jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K),
              let stream = source.makeStream(readAhead: readAhead) else {
            throw TesseraError.io(path: source.name, detail: "OpenJPEG could not start a decoder")
        }
        self.codec = codec
        self.stream = stream
        var image: UnsafeMutablePointer<opj_image_t>?
        messages.attach(to: codec)
        var parameters = opj_dparameters_t()
        opj_set_default_decoder_parameters(&parameters)
        parameters.cp_reduce = UInt32(reduction)
        let ready = opj_setup_decoder(codec, &parameters) != 0 && opj_decoder_set_strict_mode(codec, 1) != 0
            && opj_read_header(stream, codec, &image) != 0
        guard ready, let image else {
            if let image { opj_image_destroy(image) }
            opj_destroy_codec(codec)
            opj_stream_destroy(stream)
            throw source.readFailure ?? Self.failure(messages, reading: "the header", name: source.name, position: source.position,
                               length: source.length)
        }
        self.image = image
        guard image.pointee.numcomps > 0, image.pointee.x1 > image.pointee.x0, image.pointee.y1 > image.pointee.y0
        else { throw TesseraError.corrupt(path: source.name, detail: "the header describes an empty image") }
    }

    deinit {
        opj_image_destroy(image)
        opj_destroy_codec(codec)
        opj_stream_destroy(stream)
    }

    /// The container `header` starts, or nil when it is neither a JP2 file nor a codestream.
    static func container(of header: [UInt8]) -> Container? {
        if header.starts(with: JP2Boxes.signature) { return .jp2 }
        if header.starts(with: [0xFF, 0x4F, 0xFF, 0x51]) { return .codestream }
        return nil
    }

    /// The codestream's tiling, coding style and resolution levels, from its main header.
    func structure() throws -> (info: opj_codestream_info_v2_t, style: opj_tccp_info_t) {
        var owned = opj_get_cstr_info(codec)
        guard let info = owned else {
            throw TesseraError.corrupt(path: source.name, detail: "OpenJPEG could not describe the codestream")
        }
        defer { opj_destroy_cstr_info(&owned) }
        guard let styles = info.pointee.m_default_tile_info.tccp_info else {
            throw TesseraError.corrupt(path: source.name, detail: "the codestream has no coding style")
        }
        // The levels every component has, so that every reduction decodes all of them.
        var style = styles[0]
        for index in 0..<Int(info.pointee.nbcomps) where styles[index].numresolutions < style.numresolutions {
            style = styles[index]
        }
        return (info.pointee, style)
    }

    /// Decodes the area `x0..<x1`, `y0..<y1` of the reference grid (full-resolution coordinates) into `image`.
    func decode(x0: Int, y0: Int, x1: Int, y1: Int) throws {
        messages.clear()
        hasDecoded = true
        guard opj_set_decode_area(codec, image, Int32(x0), Int32(y0), Int32(x1), Int32(y1)) != 0,
              opj_decode(codec, stream, image) != 0 else {
            throw source.readFailure ?? Self.failure(messages, reading: "rows \(y0.grouped)..<\(y1.grouped)", name: source.name,
                               position: source.position, length: source.length)
        }
        for index in 0..<Int(image.pointee.numcomps) where image.pointee.comps[index].data == nil {
            throw TesseraError.corrupt(path: source.name, detail: "component \(index) was not decoded")
        }
    }

    /// Decodes codestream tile `index` whole into `image`, `reduction` resolution levels discarded; the
    /// decompressor stays ready for any other tile (it remembers where the tiles it passed start).
    func decodeTile(_ index: Int, reduction: Int) throws {
        messages.clear()
        guard opj_set_decoded_resolution_factor(codec, UInt32(reduction)) != 0,
              opj_get_decoded_tile(codec, stream, image, UInt32(index)) != 0 else {
            throw Self.failure(messages, reading: "tile \(index)", name: source.name, position: source.position,
                               length: source.length)
        }
        for component in 0..<Int(image.pointee.numcomps) where image.pointee.comps[component].data == nil {
            throw TesseraError.corrupt(path: source.name, detail: "component \(component) of tile \(index) was not decoded")
        }
    }

    /// Frees the decoded samples (OpenJPEG allocates them again for the next tile), so that an idle decompressor
    /// holds only its header.
    func releaseSamples() {
        for component in 0..<Int(image.pointee.numcomps) {
            opj_image_data_free(image.pointee.comps[component].data)
            image.pointee.comps[component].data = nil
        }
    }

    /// The error for a failed header read or decode: truncated when OpenJPEG ran out of data, else corrupt,
    /// with OpenJPEG's first message.
    private static func failure(_ messages: OpenJPEGMessages, reading what: String, name: String, position: Int,
                                length: Int) -> TesseraError {
        let message = messages.firstMessage
        let lower = messages.errors.joined(separator: " ").lowercased()
        if lower.contains("short") || lower.contains("truncat") || lower.contains("end of")
            || lower.contains("not enough") || position >= length {
            return .truncated(path: name, detail: "(reading \(what)\(message))")
        }
        return .corrupt(path: name, detail: "reading \(what)\(message)")
    }
}
