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

    /// Scans a TIFF's `directories` from page 0, of `full` pixels (its `TIFFLayout`'s size, which every caller has
    /// read), from their bytes: a libtiff handle's current directory is left as it was. A reduced
    /// level that cannot be read ends the scan rather than failing it: page 0 stays readable whatever follows it.
    /// `visit` is called with each level and its directory's fields (page 0 first, then the reductions in the order
    /// the file holds them), so that a reader of the levels' fields (`StoredTileReader.Index`) needs no walk of its
    /// own.
    init(_ directories: TIFFDirectoryReader?, full: Size,
         visit: (Level, TIFFDirectoryReader.Fields) -> Void = { _, _ in }) {
        levels = Self.walk(directories, full: full, visit: visit)
    }

    private static func walk(_ reader: TIFFDirectoryReader?, full: Size, visit: (Level, TIFFDirectoryReader.Fields) -> Void)
        -> [Level] {
        var levels = [Level(size: full, location: .page(0))]
        guard let reader, let first = reader.directory(at: reader.firstOffset) else { return levels }
        visit(levels[0], first)
        let subIFDs = first.integers(TIFFTAG_SUBIFD, count: min(first.count(of: TIFFTAG_SUBIFD) ?? 0, maximumLevels))
        if let subIFDs, !subIFDs.isEmpty {
            var reduced: [Level] = []
            for offset in subIFDs {
                guard let fields = reader.directory(at: offset), let size = imageSize(fields) else { break }
                if size.width < full.width || size.height < full.height {
                    reduced.append(Level(size: size, location: .subIFD(offset: offset)))
                    visit(reduced[reduced.count - 1], fields)
                }
            }
            levels += reduced.sorted { $0.size.area > $1.size.area }
        } else {
            var directory = first
            for page in 1..<maximumLevels {
                let previous = levels[levels.count - 1].size
                guard let next = reader.directory(at: directory.next), let size = imageSize(next),
                      isHalf(size.width, of: previous.width), isHalf(size.height, of: previous.height) else {
                    break
                }
                levels.append(Level(size: size, location: .page(page)))
                visit(levels[levels.count - 1], next)
                directory = next
            }
        }
        return levels
    }

    /// A directory's size, without the checks `TIFFLayout` makes for decoding it.
    private static func imageSize(_ fields: TIFFDirectoryReader.Fields) -> Size? {
        guard let width = fields.integer(TIFFTAG_IMAGEWIDTH),
              let height = fields.integer(TIFFTAG_IMAGELENGTH),
              width > 0, height > 0, width <= UInt64(UInt32.max), height <= UInt64(UInt32.max) else { return nil }
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
