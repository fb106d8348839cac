import CCodecShims

/// Deep Zoom: `NAME.dzi` (XML: TileSize, Overlap, Format, Size) beside `NAME_files/{level}/{column}_{row}.{ext}`,
/// level 0 the smallest; by default 254-pixel tiles with a 1-pixel overlap, down to 1 x 1, as libvips writes.
/// The scheme is written here once, for building pyramids (`path(of:)`, `metadataFiles`) and for reading them
/// back (`Descriptor(xml:path:)`, `tilePath`).
public struct DeepZoomLayout: PyramidLayout {
    public let plan: PyramidPlan
    public let name: String
    public let tileFormat: TileFormat

    public static let defaultTileSize = 254
    public static let defaultOverlap = 1

    public init(plan: PyramidPlan, name: String, tileFormat: TileFormat) {
        self.plan = plan
        self.name = name
        self.tileFormat = tileFormat
    }

    public var padsEdgeTiles: Bool { false }
    public var topLevelEntries: [String] { ["\(name)_files", "\(name).dzi"] }

    public func path(of tile: TileAddress) -> String {
        Self.tilePath(name: name, level: plan.levelNumber(ofDepth: tile.depth), column: tile.column, row: tile.row,
                      format: tileFormat.rawValue)
    }

    public func metadataFiles(blankTiles: [TileAddress]) -> [(path: String, bytes: [UInt8])] {
        let descriptor = Descriptor(imageSize: plan.imageSize, tileSize: plan.tileSize, overlap: plan.overlap,
                                    format: tileFormat.rawValue)
        return [("\(name).dzi", descriptor.xml)]
            + blankTileList(blankTiles, in: "\(name)_files") { [plan.levelNumber(ofDepth: $0.depth), $0.column, $0.row] }
    }

    /// The file of tile (`column`, `row`) of level `level` (0 the 1 x 1 level) of the pyramid `name`, relative to
    /// the folder of `name.dzi`.
    public static func tilePath(name: String, level: Int, column: Int, row: Int, format: String) -> String {
        "\(name)_files/\(level)/\(column)_\(row).\(format)"
    }

    /// The number of the full-resolution level of an image of `size`: levels halve down to 1 x 1 at level 0.
    public static func topLevel(of size: Size) -> Int {
        var level = 0
        while 1 << level < max(size.width, size.height) && level < 62 { level += 1 }
        return level
    }

    /// What a `.dzi` says: the image's size, the tile side and overlap in pixels, and the tiles' file extension.
    public struct Descriptor: Sendable, Equatable {
        public let imageSize: Size
        public let tileSize: Int
        public let overlap: Int
        public let format: String

        /// A descriptor of these values.
        public init(imageSize: Size, tileSize: Int, overlap: Int, format: String) {
            self.imageSize = imageSize
            self.tileSize = tileSize
            self.overlap = overlap
            self.format = format
        }

        /// Parses the XML of a `.dzi` with libxml2 (the `Image` element's TileSize, Overlap and Format, its `Size`
        /// element's Width and Height, the elements matched by local name, so with or without a namespace prefix);
        /// `path` names the file in errors. No network access, no entity expansion beyond libxml2's own limits.
        public init(xml: [UInt8], path: String) throws {
            try CodecLibrary.xml2.require()
            var message = [CChar](repeating: 0, count: 256)
            let document = xml.withUnsafeBytes { bytes in
                tessera_xml_parse(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(clamping: bytes.count),
                                  &message, message.count)
            }
            guard let document else {
                let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                throw TesseraError.corrupt(path: path, detail: "the .dzi is not XML: \(text)")
            }
            defer { tessera_xml_free(document) }
            let image = tessera_xml_find(document, nil, "Image")
            let size = image.flatMap { tessera_xml_find(document, $0, "Size") }
            func attribute(_ name: String, of element: OpaquePointer) -> String? {
                tessera_xml_attribute(element, name).map { String(cString: $0) }
            }
            func integer(_ name: String, of element: OpaquePointer) -> Int? {
                attribute(name, of: element).flatMap { Int($0.filter { !$0.isWhitespace }) }
            }
            guard let image, let size, let width = integer("Width", of: size),
                  let height = integer("Height", of: size), let tileSize = integer("TileSize", of: image) else {
                throw TesseraError.corrupt(path: path, detail: "a .dzi needs an Image with a TileSize and a Size with Width and Height")
            }
            self.init(imageSize: Size(width: width, height: height), tileSize: tileSize,
                      overlap: integer("Overlap", of: image) ?? 0, format: attribute("Format", of: image) ?? "jpg")
        }

        /// The `.dzi` file's bytes.
        public var xml: [UInt8] {
            Array("""
                <?xml version="1.0" encoding="UTF-8"?>
                <Image xmlns="http://schemas.microsoft.com/deepzoom/2008" Format="\(format)" \
                Overlap="\(overlap)" TileSize="\(tileSize)">
                  <Size Width="\(imageSize.width)" Height="\(imageSize.height)"/>
                </Image>

                """.utf8)
        }
    }
}

/// The record of tiles `--skip-blank` left out: `blank-tiles.json` in the layout's folder, a JSON array of
/// `[level, column, row]` in the layout's own level numbering; nothing when no tile was left out.
func blankTileList(_ tiles: [TileAddress], in folder: String, address: (TileAddress) -> [Int])
    -> [(path: String, bytes: [UInt8])] {
    guard !tiles.isEmpty else { return [] }
    let entries = tiles.map(address).sorted { $0.lexicographicallyPrecedes($1) }
        .map { "[" + $0.map(String.init).joined(separator: ",") + "]" }
    return [("\(folder)/blank-tiles.json", Array(("[\n" + entries.joined(separator: ",\n") + "\n]\n").utf8))]
}
