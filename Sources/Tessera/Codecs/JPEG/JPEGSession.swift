import CCodecShims
import CJPEG

/// One libjpeg decompressor with its input open and the header read, freed on deinit. Files are read through
/// stdio, not mapped, so a decode's memory stays bounded by its rows whatever the file's size.
final class JPEGSession {
    let decoder: OpaquePointer
    let info: UnsafeMutablePointer<jpeg_decompress_struct>
    private let name: String
    private let input: ImageInput
    private let file: CFile?
    private let bytes: UnsafeMutableBufferPointer<UInt8>?

    init(input: ImageInput) throws {
        guard let decoder = tessera_jpeg_decoder_create() else {
            throw TesseraError.io(path: input.name, detail: "cannot create a JPEG decoder")
        }
        self.decoder = decoder
        self.info = tessera_jpeg_decoder_info(decoder)
        self.name = input.name
        self.input = input
        switch input {
        case .file, .remote:
            let file = try input.openFile()!
            self.file = file
            self.bytes = nil
            _ = tessera_jpeg_set_source_file(decoder, file.handle)
        case let .bytes(data, _):
            // libjpeg keeps the pointer, so the bytes get storage whose address does not move.
            let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(data.count, 1))
            _ = copy.initialize(from: data)
            self.file = nil
            self.bytes = copy
            _ = tessera_jpeg_set_source_memory(decoder, copy.baseAddress, UInt(data.count))
        }
        try check(tessera_jpeg_read_header(decoder), during: "reading the header")
    }

    deinit {
        tessera_jpeg_decoder_destroy(decoder)
        bytes?.deallocate()
    }

    /// The quantisation table of frame component `component` as the header defines it (libjpeg's `quantval`, in
    /// natural order), or nil when the header defines none for it.
    func quantization(component: Int) -> [Int]? {
        let number = Int(info.pointee.comp_info[component].quant_tbl_no)
        guard (0..<4).contains(number), let table = withUnsafeBytes(of: info.pointee.quant_tbl_ptrs, {
            $0.load(fromByteOffset: number * MemoryLayout<UnsafeMutablePointer<JQUANT_TBL>?>.stride,
                    as: UnsafeMutablePointer<JQUANT_TBL>?.self)
        }) else { return nil }
        return withUnsafeBytes(of: table.pointee.quantval) { $0.bindMemory(to: UInt16.self).map(Int.init) }
    }

    /// Why the last read of a remote file failed, if it did: what libjpeg saw as the data ending early.
    var readFailure: TesseraError? { input.readFailure }

    /// libjpeg fills missing data with gray and only warns: make that an error unless partial output was asked for.
    func checkMissingData(allowPartial: Bool) throws {
        let missing = tessera_jpeg_decoder_missing_data(decoder)
        // A remote file that failed (replaced, unreachable) is that failure, partial output or not.
        if missing != 0, let failure = input.readFailure { throw failure }
        guard missing != 0 && !allowPartial else { return }
        let row = Int(info.pointee.output_scanline), height = Int(info.pointee.output_height)
        let place = "before row \((row + 1).grouped) of \(height.grouped)"
        if missing == 1 { throw TesseraError.truncated(path: name, detail: place) }
        throw TesseraError.corrupt(path: name, detail: "the compressed data ends early, \(place)")
    }

    /// Turns a shim's 0 into a typed error: premature end of data is truncation, anything else corruption.
    func check(_ status: Int32, during activity: String) throws {
        guard status == 0 else { return }
        if let failure = input.readFailure { throw failure }
        let message = String(cString: tessera_jpeg_decoder_message(decoder))
        if message.contains("Premature end") || message.contains("Empty input") || message.isEmpty {
            throw TesseraError.truncated(path: name, detail: "while \(activity)")
        }
        if message.contains("Maximum supported image dimension") || message.contains("Image too big") {
            throw TesseraError.unsupported(path: name, feature: message)
        }
        throw TesseraError.corrupt(path: name, detail: "\(message) (while \(activity))")
    }
}
