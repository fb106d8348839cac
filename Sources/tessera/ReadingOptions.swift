import Tessera

/// The reading options, declared once for every command that reads one image.
enum ReadingOptions {
    static let scale = Option("scale", .reduction, default: 1, "reduce by N: 1/2, 1/4 and 1/8 are nearly free for JPEG")
    static let page = Option("page", .integer(in: 0...65_535), default: 0, "TIFF: the page to read")
    static let partial = Option(flag: "partial", "with a truncated input, write what decodes instead of failing")

    static let all: [any OptionDeclaration] = [scale, page, partial, PyramidCacheOptions.folder]

    /// The read the command line asks for, of `region` when given, with the entropy indexes (`tessera index`) in
    /// the cache folder.
    static func read(_ arguments: Arguments, region: Rect? = nil) -> ReadOptions {
        ReadOptions(region: region, scale: arguments[scale], page: arguments[page], allowPartial: arguments[partial],
                    entropyIndexFolder: arguments[PyramidCacheOptions.folder])
    }
}

extension ValueKind where Value == Int {
    /// A reduction factor N written `1/N` (or `N`, or `0.5` for 1/2).
    static var reduction: Self {
        ValueKind(placeholder: "1/N", requirement: "be 1/N for a whole number N, such as 1/2 or 1/8", read: { text in
            let parts = text.split(separator: "/")
            if parts.count == 2, parts[0] == "1", let factor = Int(parts[1]), factor >= 1 { return factor }
            if let value = Double(text), value > 0, value <= 1, (1 / value).rounded() == 1 / value { return Int(1 / value) }
            return nil
        }, show: { $0 == 1 ? "1" : "1/\($0)" })
    }
}
