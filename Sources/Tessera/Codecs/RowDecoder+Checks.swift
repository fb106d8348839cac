/// The argument checks decoders make on `restrictColumns` and `decodeRows`, with the same messages everywhere.
extension RowDecoder {
    /// Throws unless `columns` is a non-empty range inside the image's width; `name` is the file's.
    func checkColumns(_ columns: Range<Int>, name: String) throws {
        guard columns.lowerBound >= 0, columns.upperBound <= size.width, !columns.isEmpty else {
            throw TesseraError.invalidArgument("\(name): columns \(columns) outside the \(size.width)-pixel width")
        }
    }

    /// Throws unless `count` rows from row `nextRow` lie inside the image; `name` is the file's.
    func checkRows(from nextRow: Int, count: Int, name: String) throws {
        guard count >= 0, nextRow + count <= size.height else {
            throw TesseraError.invalidArgument("\(name): rows \(nextRow.grouped) to \((nextRow + count).grouped)"
                                               + " past the bottom of the \(size.height.grouped)-row image")
        }
    }
}
