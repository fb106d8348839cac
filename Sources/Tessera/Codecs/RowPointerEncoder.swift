/// An encoder over a C library that compresses rows handed to it as an array of row pointers, to a temporary file
/// or to memory (libjpeg, libpng). The skeleton is here: strips checked and counted, every row there before the
/// stream ends, the file renamed into place, a library failure (status 0) turned into `TesseraError.io` with the
/// library's message, and a whole image encoded to memory. A format supplies its set-up and its library calls.
protocol RowPointerEncoder: MemoryEncoder {
    /// What is written; `path` is the file, or "tile" when encoding to memory.
    var target: EncodeTarget { get }
    /// The temporary file renamed into place by `finish()`, or nil when encoding to memory.
    var file: AtomicFile? { get }
    /// The rows handed to the library so far.
    var rowsWritten: Int { get set }
    /// Sets up the library to encode `target` to `file`, or to memory when `file` is nil.
    init(target: EncodeTarget, file: AtomicFile?) throws
    /// Compresses `count` rows; returns the library's status, 0 on failure.
    func compressRows(_ rows: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, count: Int) -> Int32
    /// Ends the stream after the last row; returns the library's status, 0 on failure.
    func endStream() -> Int32
    /// The library's message for its last failure.
    var libraryMessage: String { get }
    /// The encoded bytes, when encoding to memory.
    func memoryOutput() -> [UInt8]
}

extension RowPointerEncoder {
    init(target: EncodeTarget) throws {
        try self.init(target: target, file: AtomicFile(path: target.path))
    }

    static func encode(_ image: ImageBuffer, options: EncodeOptions) throws -> [UInt8] {
        let target = EncodeTarget(path: "tile", size: image.size, format: image.format, options: options)
        let encoder = try Self(target: target, file: nil)
        try encoder.encodeWhole(image)
        return encoder.memoryOutput()
    }

    static func encode(rowsOf reader: any ImageReader, options: EncodeOptions, stripHeight: Int) throws -> [UInt8] {
        let target = EncodeTarget(path: "image", size: reader.size, format: reader.format, options: options)
        let encoder = try Self(target: target, file: nil)
        var strip = reader.makeStrip()
        while try reader.read(into: &strip, maxRows: stripHeight) {
            CooperativeYield.point()
            try encoder.write(strip)
        }
        try encoder.complete()
        return encoder.memoryOutput()
    }

    func write(_ strip: Strip) throws {
        try target.checkStrip(strip, nextRow: rowsWritten)
        try strip.withRowPointers { rows in try check(compressRows(rows, count: strip.height)) }
        rowsWritten += strip.height
    }

    func finish() throws {
        try complete()
        try file?.commit()
    }

    /// Compresses all of `image` and ends the stream, leaving the file (if any) unrenamed.
    func encodeWhole(_ image: ImageBuffer) throws {
        try write(Strip(y: 0, pixels: image))
        try complete()
    }

    /// Ends the stream once every row is written.
    fileprivate func complete() throws {
        try target.checkComplete(rowsWritten: rowsWritten)
        try check(endStream())
    }

    /// Throws the library's message when `status` is 0.
    func check(_ status: Int32) throws {
        guard status == 0 else { return }
        throw TesseraError.io(path: target.path, detail: libraryMessage)
    }
}
