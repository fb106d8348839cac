import CTIFF

/// The resolution levels of a TIFF's first page: the page itself, then reduced-resolution versions stored either
/// as SubIFDs of page 0 or (as `vips tiffsave --pyramid` writes them) as the following pages, each half the size
/// of the one before it.
struct TIFFPyramid {
    /// Where a level's directory is.
    enum Location: Equatable {
        case page(Int)
        case subIFD(offset: UInt64)
    }

    /// A level's size in pixels and where it is stored.
    struct Level {
        var size: Size
        var location: Location
    }

    /// Largest first; the first is page 0 at full size.
    let levels: [Level]

    /// A file cannot hold more halvings than a 32-bit size has bits; bounding the scan also bounds the work a
    /// corrupt directory chain can cause.
    private static let maximumLevels = 33

    /// Scans `file`'s directories from page 0, of `full` pixels (its `TIFFLayout`'s size, which every caller has
    /// read), leaving the last one read current. A reduced level that cannot be read ends the scan rather than
    /// failing it: page 0 stays readable whatever follows it. `visit` is called with each level while its directory
    /// is current (page 0 first, then the reductions in the order the file holds them), so that a reader of the
    /// levels' fields (`StoredTileReader.Index`) needs no walk of its own.
    init(_ file: TIFFFile, full: Size, pageCount: Int, visit: (Level) -> Void = { _ in }) throws {
        try file.selectPage(0)
        var levels = [Level(size: full, location: .page(0))]
        visit(levels[0])
        let subIFDs = file.subIFDOffsets().prefix(Self.maximumLevels)
        if !subIFDs.isEmpty {
            var reduced: [Level] = []
            for offset in subIFDs {
                guard (try? file.selectSubIFD(at: offset)) != nil, let size = Self.imageSize(file) else { break }
                if size.width < full.width || size.height < full.height {
                    reduced.append(Level(size: size, location: .subIFD(offset: offset)))
                    visit(reduced[reduced.count - 1])
                }
            }
            levels += reduced.sorted { $0.size.area > $1.size.area }
        } else {
            for page in 1..<max(1, min(pageCount, Self.maximumLevels)) {
                let previous = levels[levels.count - 1].size
                guard (try? file.selectPage(page)) != nil, let size = Self.imageSize(file),
                      Self.isHalf(size.width, of: previous.width), Self.isHalf(size.height, of: previous.height) else {
                    break
                }
                levels.append(Level(size: size, location: .page(page)))
                visit(levels[levels.count - 1])
            }
        }
        self.levels = levels
    }

    /// The current directory's size, without the checks `TIFFLayout` makes for decoding it.
    private static func imageSize(_ file: TIFFFile) -> Size? {
        guard let width = file.u32(TIFFTAG_IMAGEWIDTH), let height = file.u32(TIFFTAG_IMAGELENGTH),
              width > 0, height > 0 else { return nil }
        return Size(width: Int(width), height: Int(height))
    }

    /// Writers round halves either way.
    private static func isHalf(_ value: Int, of previous: Int) -> Bool {
        previous > 1 && (value == previous / 2 || value == (previous + 1) / 2)
    }

    /// The reduction factors (powers of two) at which a level is `full` divided by the factor, rounded up or down.
    static func scales(full: Size, levels: [Size]) -> [Int] {
        var scales = [1]
        var factor = 2
        while factor <= (1 << 30) && (full.width > factor / 2 || full.height > factor / 2) {
            if levels.contains(where: { matches($0, full: full, factor: factor) }) { scales.append(factor) }
            factor *= 2
        }
        return scales
    }

    /// Whether `level` is `full` reduced by `factor`, as a writer rounding either way makes it.
    static func matches(_ level: Size, full: Size, factor: Int) -> Bool {
        let ceiling = reducedSize(full, by: factor)
        return (level.width == ceiling.width || level.width == full.width / factor)
            && (level.height == ceiling.height || level.height == full.height / factor)
    }
}
