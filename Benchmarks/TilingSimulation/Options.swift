/// The command line: `TilingSimulation [--quick] [--markdown] [--budget MB] [--image PATH] [--work DIR]
/// [--tile-sizes 100,256,512]`.
struct Options {
    /// A shorter trace (4x faster steps) and the 256-pixel tiles only, for CI.
    var quick = false
    /// Print the table as Markdown.
    var markdown = false
    /// The cache's byte budget, in megabytes (2^20 bytes).
    var budgetMegabytes = 32
    /// An 11935x8554 JPEG to use instead of the generated map.
    var image: String?
    /// Where the map and the pyramids are made and kept between runs.
    var work = ".build/tiling-simulation"
    var tileSizes = [100, 256, 512]

    static let usage = """
        usage: TilingSimulation [--quick] [--markdown] [--budget MB] [--image PATH] [--work DIR] [--tile-sizes A,B]
        """

    /// Parses `arguments` (without the program name).
    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw UsageError("\(flag) needs a value") }
            return next
        }
        var tileSizesGiven = false
        while let flag = rest.popFirst() {
            switch flag {
            case "--quick": quick = true
            case "--markdown": markdown = true
            case "--budget":
                guard let megabytes = Int(try value(flag)), megabytes > 0 else {
                    throw UsageError("--budget takes a positive number of megabytes")
                }
                budgetMegabytes = megabytes
            case "--image": image = try value(flag)
            case "--work": work = try value(flag)
            case "--tile-sizes":
                let sizes = try value(flag).split(separator: ",").compactMap { Int($0) }
                guard !sizes.isEmpty, sizes.allSatisfy({ $0 > 0 }) else {
                    throw UsageError("--tile-sizes takes sizes in pixels separated by commas")
                }
                tileSizes = sizes
                tileSizesGiven = true
            default: throw UsageError("unknown argument \(flag)")
            }
        }
        if quick && !tileSizesGiven { tileSizes = [256] }
    }
}

/// A command line the simulation cannot run.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
