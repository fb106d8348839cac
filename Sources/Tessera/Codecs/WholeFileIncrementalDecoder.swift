/// The incremental decoder for formats whose readers need the whole file (TIFF, whose directories may follow the
/// pixels; BMP; GIF; JPEG 2000): the header is tried as the data grows, and the image is decoded once, through
/// `ImageSource`, when the last update says the data is complete.
final class WholeFileIncrementalDecoder: IncrementalDecoder {
    private let name: String
    private let budget: MemoryBudget
    private(set) var properties: ImageProperties?
    private var image: ImageBuffer?
    /// The data's size when the header was last tried: it is tried again only once the data has doubled, so the
    /// attempts cost time in proportion to the file, not to the number of updates.
    private var triedAt = 0

    /// The fewest bytes worth trying a header on.
    private static let firstTry = 64

    init(name: String, budget: MemoryBudget) {
        self.name = name
        self.budget = budget
    }

    func update(_ data: UnsafeRawBufferPointer, isFinal: Bool) throws -> IncrementalProgress {
        if isFinal {
            let source = try ImageSource(bytes: [UInt8](data), name: name, budget: budget)
            properties = source.properties
            image = try source.makeReader().readAll(budget: budget, name: name)
            return .complete
        }
        if properties == nil && data.count >= max(Self.firstTry, 2 * triedAt) {
            triedAt = data.count
            properties = try? ImageSource(bytes: [UInt8](data), name: name, budget: budget).properties
        }
        return properties == nil ? .readingHeader : .incomplete
    }

    func makeImage() -> PartialImage? {
        if let image { return PartialImage(pixels: image, validRows: image.height, passes: nil, isComplete: true) }
        guard let properties, (try? budget.checkRows(width: properties.width, rows: properties.height, format: .rgba8,
                                                      for: "an empty frame", path: name)) != nil else { return nil }
        // Nothing is decoded before the whole file is in: the frame is empty.
        let format = PixelFormat(properties.hasAlpha ? .rgba : (properties.colorModel == .gray ? .gray : .rgb),
                                 bitDepth: properties.bitDepth == 16 ? 16 : 8)
        return PartialImage(pixels: ImageBuffer(width: properties.width, height: properties.height, format: format),
                            validRows: 0, passes: nil, isComplete: false)
    }
}
