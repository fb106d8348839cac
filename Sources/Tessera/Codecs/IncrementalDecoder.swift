/// One format's decoder behind `IncrementalImageSource`. Each `update` gets the whole prefix of the file
/// received so far; the decoder remembers how far it has read and decodes only the new bytes, keeping its
/// output image, never a copy of the data.
protocol IncrementalDecoder: AnyObject {
    /// What the header says, once it has been read.
    var properties: ImageProperties? { get }
    /// Decodes what the new bytes of `data` allow. With `isFinal`, `data` is the whole file, and an image that
    /// does not end within it throws `TesseraError.truncated`; bad data throws `TesseraError.corrupt` (or
    /// `.unsupported`, `.memoryLimit`). Not called again after it throws.
    func update(_ data: UnsafeRawBufferPointer, isFinal: Bool) throws -> IncrementalProgress
    /// The full-size image from what has been decoded; nil before the header is read.
    func makeImage() -> PartialImage?
}

/// How far an incremental decoder has got.
enum IncrementalProgress {
    case readingHeader
    case incomplete
    case complete
}

extension UnsafeMutableRawBufferPointer {
    /// A zero-filled buffer of `count` bytes (at least one), checked against `budget` first.
    static func zeroed(_ count: Int, budget: MemoryBudget, for purpose: String, path: String) throws -> Self {
        try budget.check(count, for: purpose, path: path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(1, count), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        return buffer
    }
}

extension ImageBuffer {
    /// A copy of `height` rows of `width` pixels in `format` from `bytes`, rows `width * bytesPerPixel` apart.
    init(width: Int, height: Int, format: PixelFormat, copying bytes: UnsafeRawPointer) {
        let count = width * height * format.bytesPerPixel
        self.init(width: width, height: height, format: format,
                  bytes: [UInt8](UnsafeRawBufferPointer(start: bytes, count: count)))
    }
}
