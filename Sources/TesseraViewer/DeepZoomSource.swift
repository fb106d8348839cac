import Foundation
import Tessera
import TesseraTiling

/// What a Deep Zoom `.dzi` file says: tile size, overlap, tile format and image size.
public struct DeepZoomDescriptor: Hashable, Sendable {
    /// The tiles' size without their overlap, in pixels.
    public let tileSize: Int
    /// The pixels each tile repeats from its neighbours on interior edges.
    public let overlap: Int
    /// The tile files' extension (`jpeg`, `jpg`, `png`, `webp`).
    public let format: String
    /// The full-resolution size, in pixels.
    public let size: PixelSize

    /// Reads the attributes of a `.dzi` XML document; `name` is used in errors.
    public init(xml: String, name: String) throws {
        func attribute(_ key: String) -> String? {
            guard let start = xml.range(of: "\(key)=\"") else { return nil }
            let rest = xml[start.upperBound...]
            return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
        }
        func number(_ key: String) throws -> Int {
            guard let text = attribute(key), let value = Int(text), value >= 0 else {
                throw ViewerError.source(path: name, detail: "no whole number \(key) in the Deep Zoom description")
            }
            return value
        }
        guard xml.contains("<Image") else {
            throw ViewerError.source(path: name, detail: "not a Deep Zoom description (no <Image> element)")
        }
        tileSize = try number("TileSize")
        overlap = try number("Overlap")
        size = PixelSize(width: try number("Width"), height: try number("Height"))
        guard let format = attribute("Format"), !format.isEmpty else {
            throw ViewerError.source(path: name, detail: "no Format in the Deep Zoom description")
        }
        self.format = format
        guard tileSize > 0, size.width > 0, size.height > 0 else {
            throw ViewerError.source(path: name, detail: "TileSize, Width and Height must be positive")
        }
    }

    /// The number of the full-resolution level: `ceil(log2(max(width, height)))`, level 0 being 1 x 1.
    public var topLevel: Int {
        var level = 0
        while 1 << level < max(size.width, size.height) { level += 1 }
        return level
    }

    /// The file of tile (`column`, `row`) at `depth` below full resolution, relative to the `_files` folder.
    public func tilePath(depth: Int, column: Int, row: Int) -> String {
        "\(topLevel - depth)/\(column)_\(row).\(format)"
    }

    /// Where the pixels of the tile at (`column`, `row`) start in its file: past the overlap it repeats from its
    /// left and top neighbours, which only interior tiles have.
    public func overlapOffset(column: Int, row: Int) -> (x: Int, y: Int) {
        (column > 0 ? overlap : 0, row > 0 ? overlap : 0)
    }
}

/// Tiles from a Deep Zoom folder: `NAME.dzi` beside `NAME_files/{level}/{column}_{row}.{format}`, one file
/// decoded per tile, its overlap cut off.
public struct DeepZoomSource: TileSource {
    public let name: String
    public let descriptor: DeepZoomDescriptor
    private let filesFolder: String

    /// Opens the pyramid described by the `.dzi` file at `path`.
    public init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path), let xml = String(data: data, encoding: .utf8) else {
            throw ViewerError.source(path: path, detail: "cannot read the Deep Zoom description")
        }
        name = path
        descriptor = try DeepZoomDescriptor(xml: xml, name: path)
        filesFolder = String(path.dropLast(".dzi".count)) + "_files"
        guard FileManager.default.fileExists(atPath: filesFolder) else {
            throw ViewerError.source(path: path, detail: "its tiles folder \(filesFolder) is missing")
        }
    }

    public var contentSize: PixelSize { descriptor.size }
    public var tileSize: PixelSize { PixelSize(width: descriptor.tileSize, height: descriptor.tileSize) }
    public var depthCount: Int { descriptor.topLevel + 1 }

    /// The pixels of `region`, which lies within one tile (the viewer's tiles are the pyramid's).
    public func pixels(depth: Int, region: Rect) throws -> ImageBuffer {
        let column = region.x / descriptor.tileSize, row = region.y / descriptor.tileSize
        let path = "\(filesFolder)/\(descriptor.tilePath(depth: depth, column: column, row: row))"
        let tile = try ImageSource(path: path).makeReader().readAll(name: path)
        let offset = descriptor.overlapOffset(column: column, row: row)
        let crop = Rect(x: region.x - column * descriptor.tileSize + offset.x,
                        y: region.y - row * descriptor.tileSize + offset.y, width: region.width, height: region.height)
        guard crop.maxX <= tile.width, crop.maxY <= tile.height else {
            throw ViewerError.source(path: path, detail: "the tile is \(tile.size), too small for \(crop)")
        }
        return tile.cropped(to: crop)
    }
}
