import Glibc

/// Every scan of a JPEG file, found by walking its marker segments and skipping each scan's entropy-coded data
/// by searching for the next marker: the frame header, each scan's header and where its data starts, and the
/// Huffman tables in force when each scan began. Nothing is decoded; memory is a few tables per scan.
struct JPEGScanIndex {
    /// One scan (SOS): which components it codes, which coefficients, and where its data is.
    struct Scan {
        /// Indices into the frame's components, in the scan's order.
        var components: [Int]
        /// The DC Huffman table of each of `components`, for DC first scans; empty otherwise.
        var dcTables: [JPEGHuffmanTable]
        /// The AC Huffman table of an AC scan (first or refinement; such scans code one component); nil otherwise.
        var acTable: JPEGHuffmanTable?
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
    /// Each component's DC dequantisation factor: entry 0 of its table as latched at its first scan (nil when the
    /// table was not defined then, or the component is in no scan).
    let dcQuantization: [Int?]
    /// Whether an APP0 JFIF segment and an APP14 Adobe segment (with its colour transform) were seen.
    let sawJFIF: Bool
    let adobeTransform: Int?
    /// Whether the file ran to its EOI marker; false when it ends first.
    let isComplete: Bool

    /// Walks the whole input.
    init(input: ImageInput) throws {
        let name = input.name
        let reader = try BufferedInput(input)
        guard try reader.readByte() == 0xFF, try reader.readByte() == 0xD8 else {
            throw TesseraError.corrupt(path: name, detail: "no JPEG start-of-image marker")
        }
        var frame: JPEGFrameHeader?
        var scans: [Scan] = []
        var dcTables = [JPEGHuffmanTable?](repeating: nil, count: 4)
        var acTables = [JPEGHuffmanTable?](repeating: nil, count: 4)
        var quantization = [Int?](repeating: nil, count: 4)
        var latched: [Int?] = []
        var restartInterval = 0, sawJFIF = false, adobeTransform: Int?
        var complete = false
        walk: while let marker = try Self.nextMarker(reader) {
            switch marker {
            case 0xD9:
                complete = true
                break walk
            case 0xD0...0xD7, 0x01, 0xD8:
                continue
            default:
                break
            }
            guard let payload = try Self.segment(reader) else { break walk }
            switch marker {
            case 0xC4:
                var index = 0
                while index < payload.count {
                    let selector = payload[index]
                    let (table, end) = try JPEGHuffmanTable.parse(payload, at: index + 1, name: name)
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
                    quantization[table] = wide ? Int(payload[index + 1]) << 8 | Int(payload[index + 2])
                        : Int(payload[index + 1])
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
                latched = [Int?](repeating: nil, count: header.components.count)
            case 0xDA:
                guard let frame else { throw TesseraError.corrupt(path: name, detail: "a scan comes before the frame header") }
                var scan = try Self.scanHeader(payload, frame: frame, name: name)
                scan.restartInterval = restartInterval
                scan.dataOffset = reader.offset
                if scan.isDC && scan.approximationHigh == 0 {
                    scan.dcTables = try scan.components.indices.map { index in
                        let selector = Int(payload[2 + 2 * index] >> 4)
                        guard selector < 4, let table = dcTables[selector] else {
                            throw TesseraError.corrupt(path: name, detail: "a scan uses DC Huffman table \(selector),"
                                                       + " which is not defined")
                        }
                        return table
                    }
                }
                if !scan.isDC {
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
                try Self.skipEntropyData(reader)
            default:
                break
            }
        }
        guard let frame else { throw TesseraError.truncated(path: name, detail: "before the frame header") }
        self.frame = frame
        self.scans = scans
        self.dcQuantization = latched
        self.sawJFIF = sawJFIF
        self.adobeTransform = adobeTransform
        self.isComplete = complete
    }

    /// Reads the byte after the next 0xFF (skipping fill bytes); nil at the end of the input.
    private static func nextMarker(_ reader: BufferedInput) throws -> UInt8? {
        while let byte = try reader.readByte() {
            guard byte == 0xFF else { continue }
            var next = try reader.readByte()
            while next == 0xFF { next = try reader.readByte() }
            guard let next else { return nil }
            if next != 0 { return next }
        }
        return nil
    }

    /// A length-prefixed segment's payload; nil when the input ends inside it.
    private static func segment(_ reader: BufferedInput) throws -> [UInt8]? {
        guard let high = try reader.readByte(), let low = try reader.readByte() else { return nil }
        let length = Int(high) << 8 | Int(low)
        guard length >= 2 else { return [] }
        var payload = [UInt8](repeating: 0, count: length - 2)
        let got = try payload.withUnsafeMutableBytes { try reader.read(into: $0) }
        return got == payload.count ? payload : nil
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
        let scan = Scan(components: components, dcTables: [], acTable: nil, spectralStart: Int(payload[tail]),
                        spectralEnd: Int(payload[tail + 1]), approximationHigh: Int(payload[tail + 2] >> 4),
                        approximationLow: Int(payload[tail + 2] & 15), restartInterval: 0, dataOffset: 0)
        let blocksPerMCU = components.reduce(0) { $0 + frame.components[$1].horizontal * frame.components[$1].vertical }
        guard Set(components).count == count, count == 1 || blocksPerMCU <= 10, scan.approximationLow <= 13 else {
            throw TesseraError.corrupt(path: name, detail: "a scan header is malformed")
        }
        return scan
    }

    /// Moves past a scan's entropy-coded data to the marker that ends it (restart markers belong to the data),
    /// searching a chunk at a time for 0xFF.
    private static func skipEntropyData(_ reader: BufferedInput) throws {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let start = reader.offset
            let got = try chunk.withUnsafeMutableBytes { try reader.read(into: $0) }
            guard got > 1 else { return }
            let found: Int? = chunk.withUnsafeBytes { bytes in
                var index = 0
                while index < got - 1 {
                    guard let hit = memchr(bytes.baseAddress! + index, 0xFF, got - 1 - index) else { return nil }
                    let position = bytes.baseAddress!.distance(to: UnsafeRawPointer(hit))
                    let next = bytes[position + 1]
                    if next != 0 && next != 0xFF && !(0xD0...0xD7).contains(next) { return position }
                    index = position + 1
                }
                return nil
            }
            if let found {
                reader.seek(to: start + found)
                return
            }
            // Look at the last byte again with what follows it.
            reader.seek(to: start + got - 1)
        }
    }
}
