/// A grid of tiles laid over an image from its top left corner, in pixels: every tile is `tileSize` but those on
/// the right and bottom edges, which the image cuts. TIFF tiles and strips (one tile across), tile folders' levels
/// and a decoder's bands of blocks are such grids.
struct TileGrid: Equatable {
    /// The image's size, in pixels.
    var imageSize: Size
    /// A whole tile's size, in pixels.
    var tileSize: Size

    /// Tiles across and down.
    var columns: Int { (imageSize.width + tileSize.width - 1) / tileSize.width }
    var rows: Int { (imageSize.height + tileSize.height - 1) / tileSize.height }

    /// The tile columns that the image columns `pixels` touch.
    func tileColumns(covering pixels: Range<Int>) -> Range<Int> {
        pixels.lowerBound / tileSize.width..<(pixels.upperBound + tileSize.width - 1) / tileSize.width
    }

    /// The tile rows that the image rows `pixels` touch.
    func tileRows(covering pixels: Range<Int>) -> Range<Int> {
        pixels.lowerBound / tileSize.height..<(pixels.upperBound + tileSize.height - 1) / tileSize.height
    }

    /// The image columns of tile column `column`, cut at the image's right edge.
    func pixelColumns(ofColumn column: Int) -> Range<Int> {
        column * tileSize.width..<min((column + 1) * tileSize.width, imageSize.width)
    }

    /// The image rows of tile row `row`, cut at the image's bottom edge.
    func pixelRows(ofRow row: Int) -> Range<Int> {
        row * tileSize.height..<min((row + 1) * tileSize.height, imageSize.height)
    }
}
