/// Every scan of a JPEG file, found by walking its marker segments with `JPEGMarkerTokenizer`, which skips each
/// scan's entropy-coded data by searching for the next marker: the frame header, each scan's header and where its
/// data starts, and the Huffman tables in force when each scan began. Nothing is decoded; memory is a few tables
/// per scan.
struct JPEGScanIndex {
    /// One scan (SOS): which components it codes, which coefficients, and where its data is.
    struct Scan {
        /// Indices into the frame's components, in the scan's order.
        var components: [Int]
        /// The DC Huffman table of each of `components`, for DC first scans; empty otherwise.
        var dcTables: [JPEGHuffmanTable]
        /// The AC Huffman table of an AC scan (first or refinement; such scans code one component); nil otherwise.
        var acTable: JPEGHuffmanTable?
        /// The AC Huffman table of each of `components`, for a sequential scan (DC and AC together); empty
        /// otherwise.
        var acTables: [JPEGHuffmanTable]
        /// Spectral selection and successive approximation (T.81 G.1.1.1.1).
        var spectralStart: Int
        var spectralEnd: Int
        var approximationHigh: Int
        var approximationLow: Int
        /// MCUs (blocks, in a one-component scan) between restart markers; 0 for none.
        var restartInterval: Int
        /// The file offset of the first byte of entropy-coded data.
        var dataOffset: Int

        /// A scan of DC coefficients only (in a progressive frame, DC and AC never share a scan).
        var isDC: Bool { spectralStart == 0 }
    }

    let frame: JPEGFrameHeader
    let scans: [Scan]
    /// Each component's quantisation table, 64 factors in natural order, as latched at its first scan (nil when
    /// the table was not defined then, or the component is in no scan).
    let quantization: [[Int]?]
    /// Each component's DC dequantisation factor: entry 0 of its table in `quantization`.
    var dcQuantization: [Int?] { quantization.map { $0?[0] } }
    /// The file offset of the frame header's payload (its precision byte; height and width follow).
    let frameOffset: Int
    /// Whether an APP0 JFIF segment and an APP14 Adobe segment (with its colour transform) were seen.
    let sawJFIF: Bool
    let adobeTransform: Int?
    /// Whether the file ran to its EOI marker; false when it ends first.
    let isComplete: Bool

    /// Walks the whole input, or with `firstScanOnly` up to the first scan's header (what a file known to have
    /// one scan, such as one with an entropy index, needs).
    init(input: ImageInput, firstScanOnly: Bool = false) throws {
        let name = input.name
        var file = try SegmentReader(input)
        var tokenizer = JPEGMarkerTokenizer()
        var frame: JPEGFrameHeader?
        var scans: [Scan] = []
        var dcTables = [JPEGHuffmanTable?](repeating: nil, count: 4)
        var acTables = [JPEGHuffmanTable?](repeating: nil, count: 4)
        var quantization = [[Int]?](repeating: nil, count: 4)
        var latched: [[Int]?] = []
        var frameOffset = 0
        var restartInterval = 0, sawJFIF = false, adobeTransform: Int?
        var complete = false, first = true
        walk: while let token = try file.next(&tokenizer) {
            guard case let .segment(segment) = token else { continue }
            if first {
                guard segment.marker == 0xD8, segment.offset == 0 else {
                    throw TesseraError.corrupt(path: name, detail: "no JPEG start-of-image marker")
                }
                first = false
            }
            let marker = segment.marker
            if marker == 0xD9 {
                complete = true
                break walk
            }
            if JPEGSegment.isStandalone(marker) { continue }
            guard let payload = try file.payload(of: segment) else { break walk }
            switch marker {
            case 0xC4:
                var index = 0
                while index < payload.count {
                    let selector = payload[index]
                    let (table, end) = try JPEGHuffmanTable.parse(payload, at: index + 1, isAC: selector >> 4 != 0,
                                                                  name: name)
                    guard selector & 15 < 4 else {
                        throw TesseraError.corrupt(path: name, detail: "Huffman table \(selector & 15) does not exist")
                    }
                    if selector >> 4 == 0 { dcTables[Int(selector & 15)] = table } else { acTables[Int(selector & 15)] = table }
                    index = end
                }
            case 0xDB:
                var index = 0
                while index < payload.count {
                    let wide = payload[index] >> 4 != 0, table = Int(payload[index] & 15)
                    let end = index + 1 + 64 * (wide ? 2 : 1)
                    guard table < 4, end <= payload.count else {
                        throw TesseraError.corrupt(path: name, detail: "a quantisation table is malformed")
                    }
                    // Stored in zigzag order.
                    var factors = [Int](repeating: 0, count: 64)
                    for k in 0..<64 {
                        factors[JPEGScanState.naturalOrder[k]] = wide
                            ? Int(payload[index + 1 + 2 * k]) << 8 | Int(payload[index + 2 + 2 * k]) : Int(payload[index + 1 + k])
                    }
                    quantization[table] = factors
                    index = end
                }
            case 0xDD:
                guard payload.count >= 2 else { throw TesseraError.corrupt(path: name, detail: "a DRI segment is too short") }
                restartInterval = Int(payload[0]) << 8 | Int(payload[1])
            case 0xE0:
                if payload.starts(with: Array("JFIF\u{0}".utf8)) { sawJFIF = true }
            case 0xEE:
                if payload.count >= 12, payload.starts(with: Array("Adobe".utf8)) { adobeTransform = Int(payload[11]) }
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                guard frame == nil else { throw TesseraError.corrupt(path: name, detail: "the file has two frame headers") }
                let header = try JPEGFrameHeader(payload: payload[...], marker: marker, name: name)
                frame = header
                frameOffset = segment.payload.lowerBound
                latched = [[Int]?](repeating: nil, count: header.components.count)
            case 0xDA:
                guard let frame else { throw TesseraError.corrupt(path: name, detail: "a scan comes before the frame header") }
                var scan = try Self.scanHeader(payload, frame: frame, name: name)
                scan.restartInterval = restartInterval
                scan.dataOffset = segment.end
                // Huffman tables only for the Huffman-coded frames Tessera decodes itself: an arithmetic-coded
                // scan has none (libjpeg reads it; Tessera's decoders refuse it as unsupported).
                let huffman = frame.isHuffmanSequential || frame.isProgressive
                if huffman && scan.isDC && scan.approximationHigh == 0 {
                    scan.dcTables = try scan.components.indices.map { index in
                        let selector = Int(payload[2 + 2 * index] >> 4)
                        guard selector < 4, let table = dcTables[selector] else {
                            throw TesseraError.corrupt(path: name, detail: "a scan uses DC Huffman table \(selector),"
                                                       + " which is not defined")
                        }
                        return table
                    }
                }
                if frame.isHuffmanSequential && scan.spectralEnd > 0 {
                    scan.acTables = try scan.components.indices.map { index in
                        let selector = Int(payload[2 + 2 * index] & 15)
                        guard selector < 4, let table = acTables[selector] else {
                            throw TesseraError.corrupt(path: name, detail: "a scan uses AC Huffman table \(selector),"
                                                       + " which is not defined")
                        }
                        return table
                    }
                } else if huffman && !scan.isDC {
                    let selector = Int(payload[2] & 15)
                    guard selector < 4, let table = acTables[selector] else {
                        throw TesseraError.corrupt(path: name, detail: "a scan uses AC Huffman table \(selector),"
                                                   + " which is not defined")
                    }
                    scan.acTable = table
                }
                for component in scan.components where latched[component] == nil {
                    latched[component] = quantization[frame.components[component].quantizationTable]
                }
                scans.append(scan)
                if firstScanOnly { break walk }
            default:
                break
            }
        }
        if first { throw TesseraError.corrupt(path: name, detail: "no JPEG start-of-image marker") }
        guard let frame else { throw TesseraError.truncated(path: name, detail: "before the frame header") }
        self.frame = frame
        self.scans = scans
        self.quantization = latched
        self.frameOffset = frameOffset
        self.sawJFIF = sawJFIF
        self.adobeTransform = adobeTransform
        self.isComplete = complete
    }

    private static func scanHeader(_ payload: [UInt8], frame: JPEGFrameHeader, name: String) throws -> Scan {
        let count = payload.first.map(Int.init) ?? 0
        guard (1...4).contains(count), payload.count >= 1 + 2 * count + 3 else {
            throw TesseraError.corrupt(path: name, detail: "a scan header is malformed")
        }
        let components = try (0..<count).map { index in
            let id = payload[1 + 2 * index]
            guard let component = frame.components.firstIndex(where: { $0.id == id }) else {
                throw TesseraError.corrupt(path: name, detail: "a scan names component \(id), which the frame lacks")
            }
            return component
        }
        let tail = 1 + 2 * count
        let scan = Scan(components: components, dcTables: [], acTable: nil, acTables: [], spectralStart: Int(payload[tail]),
                        spectralEnd: Int(payload[tail + 1]), approximationHigh: Int(payload[tail + 2] >> 4),
                        approximationLow: Int(payload[tail + 2] & 15), restartInterval: 0, dataOffset: 0)
        let blocksPerMCU = components.reduce(0) { $0 + frame.components[$1].horizontal * frame.components[$1].vertical }
        guard Set(components).count == count, count == 1 || blocksPerMCU <= 10, scan.approximationLow <= 13 else {
            throw TesseraError.corrupt(path: name, detail: "a scan header is malformed")
        }
        return scan
    }

    /// The file under the walk, read a window at a time for the tokenizer, and segment payloads read on demand.
    private struct SegmentReader {
        let input: BufferedInput
        /// At most 64 KiB; a smaller file (a stored tile being cut) whole.
        var window: [UInt8]
        var windowStart = 0
        var windowCount = 0

        init(_ input: ImageInput) throws {
            self.input = try BufferedInput(input)
            window = [UInt8](repeating: 0, count: max(1, min(1 << 16, self.input.count)))
        }

        /// The next token; nil at the end of the input.
        mutating func next(_ tokenizer: inout JPEGMarkerTokenizer) throws -> JPEGToken? {
            while true {
                let start = windowStart
                if let token = window.withUnsafeBytes({ tokenizer.next(in: UnsafeRawBufferPointer(rebasing: $0[..<windowCount]), at: start) }) {
                    return token
                }
                guard windowStart + windowCount < input.count || tokenizer.position < windowStart else { return nil }
                input.seek(to: tokenizer.position)
                windowStart = tokenizer.position
                windowCount = try window.withUnsafeMutableBytes { try input.read(into: $0) }
                if windowCount == 0 { return nil }
            }
        }

        /// A segment's payload; nil when the input ends inside it.
        func payload(of segment: JPEGSegment) throws -> [UInt8]? {
            let range = segment.payload
            if range.lowerBound >= windowStart, range.upperBound <= windowStart + windowCount {
                return Array(window[range.lowerBound - windowStart..<range.upperBound - windowStart])
            }
            var payload = [UInt8](repeating: 0, count: range.count)
            input.seek(to: range.lowerBound)
            let got = try payload.withUnsafeMutableBytes { try input.read(into: $0) }
            return got == payload.count ? payload : nil
        }
    }
}
