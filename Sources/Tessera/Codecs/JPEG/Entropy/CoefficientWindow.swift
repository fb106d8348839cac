/// A few rows of MCUs of every component's coefficients, over a range of MCU columns (all of them, or a region's),
/// 64 `Int16` per block (MCU padding included), laid out one of two ways (`Layout`). Rows `firstRow..<endRow`
/// are held; `slide(to:)` moves the window down, keeping the rows it still covers.
final class CoefficientWindow {
    /// How the blocks are laid out.
    enum Layout {
        /// Per component, `vertical` block rows per MCU row, each `columns.count * horizontal` blocks: what the
        /// progressive decoder refines and the 1/8 rows are made from (`blockRow`).
        case planes
        /// MCU after MCU, each MCU's blocks in libjpeg's order (each component's blocks row by row): what libjpeg
        /// takes in place (`mcu`).
        case mcus
    }

    let frame: JPEGFrameHeader
    let layout: Layout
    /// Whether rows new to the window start at zero: for a writer that adds to what is there (progressive scans
    /// refining coefficients); one that writes every block it is given whole needs no clearing.
    let clearsNewRows: Bool
    /// MCU rows held at most.
    let capacity: Int
    /// The MCU columns held.
    let columns: Range<Int>
    private(set) var firstRow = 0
    private(set) var endRow = 0
    /// Blocks per block row of each component (`planes`), or per MCU row in one plane (`mcus`).
    let strides: [Int]
    /// Blocks per MCU row of each plane: `strides` times the block rows an MCU row has in it.
    private let rowBlocks: [Int]
    private let planes: [UnsafeMutablePointer<Int16>]
    /// Blocks in one MCU, and where each component's start within it (`mcus`).
    let blocksPerMCU: Int
    private let componentOffsets: [Int]

    /// The bytes one MCU row of coefficients takes.
    static func bytesPerMCURow(_ frame: JPEGFrameHeader) -> Int {
        frame.components.reduce(0) { $0 + frame.mcusAcross * $1.horizontal * $1.vertical * 64 * 2 }
    }

    /// A window of `capacity` MCU rows over MCU `columns` (nil: the whole width).
    init(frame: JPEGFrameHeader, capacity: Int, columns: Range<Int>? = nil, layout: Layout = .planes,
         clearsNewRows: Bool = true) {
        self.frame = frame
        self.capacity = capacity
        self.layout = layout
        self.clearsNewRows = clearsNewRows
        let columns = columns ?? 0..<frame.mcusAcross
        self.columns = columns
        let sizes = frame.components.map { $0.horizontal * $0.vertical }
        blocksPerMCU = sizes.reduce(0, +)
        componentOffsets = sizes.indices.map { sizes[..<$0].reduce(0, +) }
        switch layout {
        case .planes:
            strides = frame.components.map { columns.count * $0.horizontal }
            rowBlocks = frame.components.indices.map { columns.count * sizes[$0] }
        case .mcus:
            strides = [columns.count * blocksPerMCU]
            rowBlocks = strides
        }
        planes = rowBlocks.map { blocks in
            let plane = UnsafeMutablePointer<Int16>.allocate(capacity: blocks * capacity * 64)
            plane.initialize(repeating: 0, count: blocks * capacity * 64)
            return plane
        }
    }

    deinit { planes.forEach { $0.deallocate() } }

    /// The first held block of block row `row` (in the whole component) of `component` (`planes`); the row must be
    /// held.
    func blockRow(component: Int, row: Int) -> UnsafeMutablePointer<Int16> {
        let vertical = frame.components[component].vertical
        return planes[component] + ((row - firstRow * vertical) * strides[component]) * 64
    }

    /// The first block of the MCU at `column` (counted from the window's first) of MCU row `row` (`mcus`); the row
    /// must be held.
    func mcu(row: Int, column: Int) -> UnsafeMutablePointer<Int16> {
        planes[0] + ((row - firstRow) * strides[0] + column * blocksPerMCU) * 64
    }

    /// Where the block at `blockRow`, `blockColumn` of `component` within an MCU is in the window's first MCU
    /// column of held MCU row `row`, and the coefficients from one MCU's to the next's.
    func placement(row: Int, component: Int, blockRow: Int, blockColumn: Int) -> (first: UnsafeMutablePointer<Int16>, step: Int) {
        let info = frame.components[component]
        switch layout {
        case .planes:
            return (self.blockRow(component: component, row: row * info.vertical + blockRow) + blockColumn * 64,
                    info.horizontal * 64)
        case .mcus:
            return (mcu(row: row, column: 0) + (componentOffsets[component] + blockRow * info.horizontal + blockColumn) * 64,
                    blocksPerMCU * 64)
        }
    }

    /// Holds MCU rows `first..<end` (`end - first <= capacity`, `first >= firstRow`): rows already held move up;
    /// new ones start at zero (`clearsNewRows`) or as they were.
    func slide(to first: Int, end: Int) {
        precondition(end - first <= capacity && first >= firstRow)
        for index in planes.indices {
            let rowCount = rowBlocks[index] * 64
            let kept = max(0, min(endRow, end) - first)
            if kept > 0 && first > firstRow {
                UnsafeMutableRawPointer(planes[index]).copyMemory(from: planes[index] + (first - firstRow) * rowCount,
                                                                  byteCount: kept * rowCount * 2)
            }
            if clearsNewRows {
                (planes[index] + kept * rowCount).update(repeating: 0, count: (end - first - kept) * rowCount)
            }
        }
        firstRow = first
        endRow = end
    }
}
