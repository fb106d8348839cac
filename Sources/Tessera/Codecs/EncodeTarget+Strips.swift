/// The checks every encoder makes on the strips it is fed, so that they fail with the same messages.
extension EncodeTarget {
    /// Throws unless `strip` continues the image at `nextRow` with its width and pixel format.
    func checkStrip(_ strip: Strip, nextRow: Int) throws {
        guard strip.y == nextRow, strip.width == size.width, strip.format == format,
              nextRow + strip.height <= size.height else {
            throw TesseraError.invalidArgument("\(path): expected rows from \(nextRow.grouped) of \(size.width)-pixel"
                                               + " \(format), got a strip at row \(strip.y.grouped) of"
                                               + " \(strip.width)-pixel \(strip.format)")
        }
    }

    /// Throws unless all rows were written (`rowsWritten` of them) before finishing.
    func checkComplete(rowsWritten: Int) throws {
        guard rowsWritten == size.height else {
            throw TesseraError.invalidArgument("\(path): only \(rowsWritten.grouped) of \(size.height.grouped) rows"
                                               + " were written")
        }
    }
}
