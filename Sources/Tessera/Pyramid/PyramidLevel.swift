/// One level of a pyramid being built: a window of its rows, one tile row tall plus the overlap above and below,
/// that receives rows top to bottom, cuts each complete row of tiles out, and averages pairs of rows 2 x 2 into the
/// next level. Memory is O(level width x tile size).
final class PyramidLevel {
    let depth: Int
    let size: Size
    let format: PixelFormat
    private let plan: PyramidPlan
    private let bytesPerRow: Int
    /// Rows `firstRow ..< firstRow + rowCount` of the level.
    private var window: [UInt8]
    private var firstRow = 0
    private var rowCount = 0
    /// The next tile row to cut.
    private var tileRow = 0
    /// An even row waiting for its odd partner before the pair is averaged into the next level.
    private var pendingRow: [UInt8]?
    private var halfRow: [UInt8]

    init(plan: PyramidPlan, depth: Int, format: PixelFormat) {
        self.plan = plan
        self.depth = depth
        self.size = plan.levels[depth].size
        self.format = format
        bytesPerRow = size.width * format.bytesPerPixel
        window = [UInt8](repeating: 0, count: bytesPerRow * (plan.tileSize + 2 * plan.overlap))
        halfRow = [UInt8](repeating: 0, count: ((size.width + 1) / 2) * format.bytesPerPixel)
    }

    /// The row that completes tile row `tileRow`: its last row including the bottom overlap.
    private var rowsNeeded: Int { min(size.height, (tileRow + 1) * plan.tileSize + plan.overlap) }

    /// Adds the next row; calls `cut` for each tile row it completes and `forward` with the row, if any, that it
    /// completes for the next level.
    func append(_ row: UnsafeRawBufferPointer, cut: (_ tileRow: Int) throws -> Void,
                forward: (_ halfRow: UnsafeRawBufferPointer) throws -> Void) throws {
        window.withUnsafeMutableBytes { target in
            target.baseAddress!.advanced(by: rowCount * bytesPerRow).copyMemory(from: row.baseAddress!, byteCount: bytesPerRow)
        }
        rowCount += 1
        // The last row can complete two tile rows: when the last tile row lies within the overlap below the one
        // before it (a level 255 high in 254-pixel tiles with overlap 1), both end on this row.
        while tileRow < plan.levels[depth].rows && firstRow + rowCount == rowsNeeded {
            try cut(tileRow)
            advanceTileRow()
        }
        guard depth + 1 < plan.levels.count else { return }
        if let pending = pendingRow {
            pending.withUnsafeBytes { emitHalf(pending: $0, row) }
            pendingRow = nil
            try halfRow.withUnsafeBytes { try forward($0) }
        } else {
            pendingRow = Array(row)
        }
    }

    /// At the end of the level: an odd last row is averaged with itself (levels halve rounding up).
    func finish(forward: (_ halfRow: UnsafeRawBufferPointer) throws -> Void) throws {
        guard let pending = pendingRow, depth + 1 < plan.levels.count else { return }
        pending.withUnsafeBytes { emitHalf(pending: $0, $0) }
        pendingRow = nil
        try halfRow.withUnsafeBytes { try forward($0) }
    }

    /// Copies tile (`column`, `tileRow`) out of the window, padded to the full tile size when `padded`.
    func tile(column: Int, row tileRow: Int, padded: Bool, background: [UInt8]) -> ImageBuffer {
        let rect = plan.tileRect(depth: depth, column: column, row: tileRow)
        let outSize = padded ? Size(width: plan.tileSize, height: plan.tileSize) : rect.size
        var tile = ImageBuffer(width: outSize.width, height: outSize.height, format: format)
        let pixel = format.bytesPerPixel, copyBytes = rect.width * pixel
        tile.bytes.withUnsafeMutableBytes { target in
            if padded && outSize != rect.size { fill(target, with: background) }
            window.withUnsafeBytes { source in
                for line in 0..<rect.height {
                    let from = (rect.y + line - firstRow) * bytesPerRow + rect.x * pixel
                    target.baseAddress!.advanced(by: line * tile.bytesPerRow)
                        .copyMemory(from: source.baseAddress!.advanced(by: from), byteCount: copyBytes)
                }
            }
        }
        return tile
    }

    /// Keeps only the rows the next tile row shares with this one (its top overlap).
    private func advanceTileRow() {
        tileRow += 1
        let keepFrom = max(0, tileRow * plan.tileSize - plan.overlap)
        let keep = firstRow + rowCount - keepFrom
        if keep > 0 {
            window.withUnsafeMutableBytes { raw in
                let base = raw.baseAddress!
                base.copyMemory(from: base.advanced(by: (keepFrom - firstRow) * bytesPerRow), byteCount: keep * bytesPerRow)
            }
        }
        firstRow = keepFrom
        rowCount = max(0, keep)
    }

    /// Averages two rows 2 x 2 into `halfRow`, an odd last column with itself.
    private func emitHalf(pending top: UnsafeRawBufferPointer, _ bottom: UnsafeRawBufferPointer) {
        let channels = format.channelCount, width = size.width, half = (width + 1) / 2
        let a = top.bindMemory(to: UInt8.self), b = bottom.bindMemory(to: UInt8.self)
        halfRow.withUnsafeMutableBufferPointer { out in
            for x in 0..<half {
                let left = 2 * x * channels, right = min(2 * x + 1, width - 1) * channels
                for channel in 0..<channels {
                    let sum = UInt16(a[left + channel]) + UInt16(a[right + channel])
                        + UInt16(b[left + channel]) + UInt16(b[right + channel])
                    out[x * channels + channel] = UInt8((sum + 2) >> 2)
                }
            }
        }
    }

    private func fill(_ buffer: UnsafeMutableRawBufferPointer, with background: [UInt8]) {
        let pixel = format.pixel(fromRGB: background)
        for index in stride(from: 0, to: buffer.count, by: pixel.count) {
            for channel in pixel.indices { buffer[index + channel] = pixel[channel] }
        }
    }
}
