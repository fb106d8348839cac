/// A few rows of MCUs of every component's coefficients, over a range of MCU columns (all of them, or a region's):
/// per component `vertical` block rows per MCU row, each `columns.count * horizontal` blocks of 64 `Int16` (MCU
/// padding included). Rows `firstRow..<endRow` are held; `slide(to:)` moves the window down, keeping the rows it
/// still covers.
final class CoefficientWindow {
    let frame: JPEGFrameHeader
    /// MCU rows held at most.
    let capacity: Int
    /// The MCU columns held.
    let columns: Range<Int>
    private(set) var firstRow = 0
    private(set) var endRow = 0
    /// Blocks per block row of each component.
    let strides: [Int]
    private let planes: [UnsafeMutablePointer<Int16>]

    /// The bytes one MCU row of coefficients takes.
    static func bytesPerMCURow(_ frame: JPEGFrameHeader) -> Int {
        frame.components.reduce(0) { $0 + frame.mcusAcross * $1.horizontal * $1.vertical * 64 * 2 }
    }

    /// A window of `capacity` MCU rows over MCU `columns` (nil: the whole width).
    init(frame: JPEGFrameHeader, capacity: Int, columns: Range<Int>? = nil) {
        self.frame = frame
        self.capacity = capacity
        let columns = columns ?? 0..<frame.mcusAcross
        self.columns = columns
        let strides = frame.components.map { columns.count * $0.horizontal }
        self.strides = strides
        planes = frame.components.indices.map { index in
            let count = strides[index] * frame.components[index].vertical * capacity * 64
            let plane = UnsafeMutablePointer<Int16>.allocate(capacity: count)
            plane.initialize(repeating: 0, count: count)
            return plane
        }
    }

    deinit { planes.forEach { $0.deallocate() } }

    /// The first held block of block row `row` (in the whole component) of `component`; the row must be held.
    func blockRow(component: Int, row: Int) -> UnsafeMutablePointer<Int16> {
        let vertical = frame.components[component].vertical
        return planes[component] + ((row - firstRow * vertical) * strides[component]) * 64
    }

    /// Holds MCU rows `first..<end` (`end - first <= capacity`, `first >= firstRow`): rows already held move up,
    /// new ones start at zero.
    func slide(to first: Int, end: Int) {
        precondition(end - first <= capacity && first >= firstRow)
        for index in planes.indices {
            let rowCount = strides[index] * frame.components[index].vertical * 64
            let kept = max(0, min(endRow, end) - first)
            if kept > 0 && first > firstRow {
                UnsafeMutableRawPointer(planes[index]).copyMemory(from: planes[index] + (first - firstRow) * rowCount,
                                                                  byteCount: kept * rowCount * 2)
            }
            (planes[index] + kept * rowCount).update(repeating: 0, count: (end - first - kept) * rowCount)
        }
        firstRow = first
        endRow = end
    }
}
