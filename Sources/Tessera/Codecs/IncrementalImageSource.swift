/// An image source fed as data arrives, as ImageIO's incremental `CGImageSource`: give it all the data received
/// so far with `update(data:isFinal:)`, read its `status` and `properties`, and make an image from what has
/// arrived at any time with `makeImage(maxPixelSize:)`.
///
///     update(prefix) -> detect the format (unknownType until the first 12 bytes)
///                    -> the format's IncrementalDecoder, fed only the bytes past where it stopped
///                       JPEG: libjpeg over a suspending source (buffered-image mode for progressive files)
///                       PNG: libpng's progressive reader; WebP: libwebp's WebPIDecoder
///                       TIFF, BMP, GIF: nothing until the last update, then one `ImageSource` decode
///     makeImage      -> PartialImage (rows so far, or the last complete scan or pass), reduced if asked
///
/// An update never redoes earlier work, and the source keeps the decoded image, not the data. Each `data` must
/// begin with the previous one (the caller's buffer grows); a class, because it owns the decoder's state: use it
/// from one thread at a time.
public final class IncrementalImageSource {
    /// Where decoding stands, with ImageIO's names.
    public enum Status: String, Sendable, Equatable {
        /// Too few bytes to know the format.
        case unknownType
        /// The format is known; its header is not complete yet.
        case readingHeader
        /// The header is read (`properties` is set); some of the image data has not arrived.
        case incomplete
        /// The whole image is decoded.
        case complete
        /// The data is not an image Tessera reads, or is damaged (`error` says how).
        case invalidData
        /// The last update was final, and the image ends before its data does.
        case unexpectedEOF
    }

    /// Where decoding stands.
    public private(set) var status: Status = .unknownType
    /// Why the status is `invalidData` or `unexpectedEOF`.
    public private(set) var error: TesseraError?
    /// The format, once the first bytes tell it.
    public private(set) var format: ImageFormat?
    /// The name used in error messages.
    public let name: String
    /// The budget the decoded image is checked against.
    public let budget: MemoryBudget
    private var decoder: IncrementalDecoder?
    private var received = 0

    /// An empty source; `name` is used in error messages.
    public init(name: String = "<data>", budget: MemoryBudget = .default) {
        self.name = name
        self.budget = budget
    }

    /// What the header says, once it has been read; the file size is the data received so far.
    public var properties: ImageProperties? {
        guard var properties = decoder?.properties else { return nil }
        properties.fileSize = received
        return properties
    }

    /// Gives the source all the data received so far (a prefix of the file, growing from call to call); with
    /// `isFinal`, the data is the whole file. Decodes what the new bytes allow. Calls after the image is complete
    /// or has failed change nothing.
    public func update<Bytes: Collection<UInt8>>(data: Bytes, isFinal: Bool) {
        if let done = data.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0), isFinal: isFinal) }) {
            return done
        }
        Array(data).withUnsafeBytes { update($0, isFinal: isFinal) }
    }

    private func update(_ data: UnsafeRawBufferPointer, isFinal: Bool) {
        guard status != .complete && status != .invalidData && status != .unexpectedEOF else { return }
        received = data.count
        do {
            if decoder == nil {
                guard let format = ImageFormat.detect(data.prefix(12)) else {
                    if data.count < 12 && !isFinal { return }
                    throw data.isEmpty ? TesseraError.truncated(path: name, detail: "(no data)")
                        : TesseraError.unknownFormat(path: name)
                }
                self.format = format
                decoder = Self.decoder(for: format, name: name, budget: budget)
                status = .readingHeader
            }
            switch try decoder!.update(data, isFinal: isFinal) {
            case .readingHeader: status = .readingHeader
            case .incomplete: status = .incomplete
            case .complete: status = .complete
            }
        } catch let failure as TesseraError {
            fail(failure)
        } catch {
            fail(.corrupt(path: name, detail: "\(error)"))
        }
    }

    private func fail(_ failure: TesseraError) {
        error = failure
        if case .truncated = failure { status = .unexpectedEOF } else { status = .invalidData }
    }

    private static func decoder(for format: ImageFormat, name: String, budget: MemoryBudget) -> IncrementalDecoder {
        switch format {
        case .jpeg: return JPEGIncrementalDecoder(name: name, budget: budget)
        case .png: return PNGIncrementalDecoder(name: name, budget: budget)
        case .webp: return WebPIncrementalDecoder(name: name, budget: budget)
        case .tiff, .bmp, .gif, .jpeg2000, .deepZoom, .iiif: return WholeFileIncrementalDecoder(name: name, budget: budget)
        }
    }

    /// The image from the data so far (see `PartialImage` for what is valid), its longer side reduced to at most
    /// `maxPixelSize` pixels when given; nil until the header is read. After `invalidData` or `unexpectedEOF`,
    /// it is what was decoded before the failure.
    public func makeImage(maxPixelSize: Int? = nil) throws -> PartialImage? {
        guard let image = decoder?.makeImage() else { return nil }
        guard let maxPixelSize else { return image }
        return try image.reduced(toMaxPixelSize: maxPixelSize, budget: budget)
    }
}
