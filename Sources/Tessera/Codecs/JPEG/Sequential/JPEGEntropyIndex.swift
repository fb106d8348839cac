import CZlib
import Foundation

/// Random access into a sequential JPEG without restart markers: the entropy decoder's state (bit position, DC
/// predictions, restart count) saved before every MCU row and every `stride` MCUs along it, so a region's MCUs are
/// decoded from the nearest saved state instead of from the top. Built by one pass of `SequentialCoefficientDecoder`
/// over the whole scan; `stride` is the smallest power of two keeping the encoded index within 0.5% of the file.
///
/// Kept in a file beside the pyramid cache, named like the cache's pyramids from the JPEG's path, size and
/// modification time (`PyramidCache.fileStem`). The format (little-endian, version 2):
///
///     "TSEI" u16 version  u64 file size  u64 modification time (Double bits)  u64 scan data offset
///     u32 MCUs across  u32 MCUs down  u8 components  u32 restart interval  u32 stride  u32 states
///     varint per MCU row: the bytes of its states' records
///     states, row by row: u8 flags (bits 0-2 bits to skip, 3 whole buffer), zigzag varint offset delta,
///       [u64 buffer, u8 count, u8 padding, u8 marker or 0xFF], zigzag varint DC prediction delta per component;
///       the deltas from the record before in the row, a row's first from the row above's first (the first row's
///       from the scan data offset and zero predictions)
///     u32 CRC-32 of everything before it
///
/// Where a state is in its restart interval follows from the MCU it was saved before, so is not stored. Opening an
/// index reads its header, its row lengths and each row's first record, and a read parses only the rows it asks
/// for (version 1 had every record walked at open: 2 ms for a gigapixel's 0.8 MB).
///
/// A file that is stale (another size or time), truncated, damaged (its CRC), of another version or describing
/// another scan is never trusted: `load` gives nil and the index is built again. A record that is malformed none
/// the less (a file made to pass its checksum) is refused where a read meets it: `state` gives nil.
public struct JPEGEntropyIndex: Equatable, Sendable {
    /// The JPEG an index was built from: its size in bytes and its modification time, in seconds since 1970.
    public struct Key: Equatable, Sendable {
        public var size: Int
        public var modified: Double

        /// The key of the file at `path` now.
        public init(path: String) throws {
            guard let stamp = FileStamp(path: path) else {
                throw TesseraError.io(path: path, detail: "cannot read the file's size and time")
            }
            size = stamp.size
            modified = stamp.modified.timeIntervalSince1970
        }

        init(size: Int, modified: Double) {
            self.size = size
            self.modified = modified
        }
    }

    static let magic = Array("TSEI".utf8)
    static let version: UInt16 = 2
    /// The file name's extension beside the cache's stem.
    static let fileExtension = "jpegindex"

    public let key: Key
    /// Where the scan's entropy-coded data starts, and its geometry: what the index must agree with to be used.
    let dataOffset: Int
    let mcusAcross: Int
    let mcusDown: Int
    let componentCount: Int
    let restartInterval: Int
    /// MCUs between saved states along a row.
    public let stride: Int
    /// The saved states as the file holds them (the records after its row lengths, in the bytes read from the
    /// file, not copied out), and where each MCU row's records start: the index is kept as it is stored, a third of
    /// a percent of its JPEG, and a row's states are read from it when a read asks for them.
    private let records: ArraySlice<UInt8>
    private let rows: [RowStart]

    /// Where an MCU row's records start in `records`, and what its first record's deltas are from (the row above's
    /// first record's values).
    private struct RowStart: Equatable, Sendable {
        var position: Int
        var offset: Int
        var predictions: SIMD4<Int32>
    }

    var statesPerRow: Int { Self.statesPerRow(mcusAcross: mcusAcross, stride: stride) }

    /// The states saved along a row of `mcusAcross` MCUs, one every `stride`.
    static func statesPerRow(mcusAcross: Int, stride: Int) -> Int { (mcusAcross + stride - 1) / stride }

    /// Every saved state, the state before MCU (row, k * stride), row by row; those of well-formed rows.
    var states: [JPEGScanState.Resumable] {
        (0..<mcusDown).flatMap { row in rowStates(row, count: statesPerRow) ?? [] }
    }

    /// The most bytes an index of a file of `fileSize` bytes takes.
    public static func byteLimit(forFileSize fileSize: Int) -> Int { fileSize / 200 }

    /// The saved state nearest before MCU `column` of MCU row `row`, and the MCU (counted from the top left) it
    /// was saved before; nil when the row's records are malformed.
    func state(row: Int, column: Int) -> (state: JPEGScanState.Resumable, position: Int)? {
        let saved = column / stride
        return rowStates(row, count: saved + 1).map { ($0[saved], row * mcusAcross + saved * stride) }
    }

    /// The first `count` states saved along MCU row `row`, parsed from its records; nil when one is malformed (cut
    /// short by the next row's, or placing the reader before the scan's data or past its bit buffer).
    private func rowStates(_ row: Int, count: Int) -> [JPEGScanState.Resumable]? {
        let start = rows[row], end = row + 1 < rows.count ? rows[row + 1].position : records.count
        return records.withUnsafeBufferPointer { records in
            var parser = ByteParser(bytes: UnsafeBufferPointer(rebasing: records[..<end]))
            parser.position = start.position
            var offset = start.offset, predictions = start.predictions
            var states: [JPEGScanState.Resumable] = []
            states.reserveCapacity(count)
            for saved in 0..<count {
                let reader = Self.record(&parser, offset: &offset, predictions: &predictions, components: componentCount)
                guard !parser.overran, reader.offset >= dataOffset, reader.count <= 64, reader.padding <= reader.count
                else { return nil }
                states.append(Self.resumable(reader: reader, predictions: predictions,
                                             position: row * mcusAcross + saved * stride, interval: restartInterval))
            }
            return states
        }
    }

    /// Whether this index describes the scan `scans` found (same data offset, geometry and restart interval).
    func describes(_ scans: JPEGScanIndex) -> Bool {
        guard let scan = scans.scans.first else { return false }
        return scan.dataOffset == dataOffset && scans.frame.mcusAcross == mcusAcross && scans.frame.mcusDown == mcusDown
            && scans.frame.components.count == componentCount && scan.restartInterval == restartInterval
    }

    /// Decodes the whole scan of the JPEG `input` (whose key is `key`) once and keeps its states, on `workers`
    /// threads when the scan has no restart interval (`SpeculativeIndexBuild`), else serially; throws
    /// `unsupported` for JPEGs `SequentialCoefficientDecoder` does not read, and for files so small that even one
    /// state per MCU row would exceed the size limit.
    public static func build(input: ImageInput, key: Key, workers: Int = availableCores()) throws
        -> JPEGEntropyIndex {
        let scans = try JPEGScanIndex(input: input)
        let decoder = try SequentialCoefficientDecoder(index: scans, input: input)
        let stride = firstStride(scans.frame, fileSize: key.size)
        var states: [JPEGScanState.Resumable]
        if workers > 1, let found = try SpeculativeIndexBuild.states(scans: scans, input: input, workers: workers,
                                                                      stride: stride) {
            states = found.states
        } else {
            states = []
            states.reserveCapacity(stateCount(scans.frame, stride: stride))
            try decoder.record(through: decoder.mcuCount, every: stride, into: &states)
        }
        return try fitted(key: key, scans: scans, stride: stride, states: states, name: input.name)
    }

    /// The stride to record states at first, from a small state's size: `fitted` thins it while the encoding is
    /// still over the limit for a file of `fileSize` bytes.
    static func firstStride(_ frame: JPEGFrameHeader, fileSize: Int) -> Int {
        let typical = 2 + frame.components.count, limit = byteLimit(forFileSize: fileSize)
        var stride = 1
        while stride < frame.mcusAcross && 64 + typical * stateCount(frame, stride: stride) > limit { stride *= 2 }
        return stride
    }

    /// The states an index of `frame` recorded every `stride` MCUs of each row holds.
    static func stateCount(_ frame: JPEGFrameHeader, stride: Int) -> Int {
        frame.mcusDown * statesPerRow(mcusAcross: frame.mcusAcross, stride: stride)
    }

    /// The index of the scan `scans` found from its `states`, recorded every `stride` MCUs of each row, thinned
    /// until it fits the size limit; throws `unsupported` when even one state per row does not.
    static func fitted(key: Key, scans: JPEGScanIndex, stride: Int, states: [JPEGScanState.Resumable], name: String)
        throws -> JPEGEntropyIndex {
        let frame = scans.frame, scan = scans.scans[0], limit = byteLimit(forFileSize: key.size)
        var index = JPEGEntropyIndex(key: key, dataOffset: scan.dataOffset, mcusAcross: frame.mcusAcross,
                                     mcusDown: frame.mcusDown, componentCount: frame.components.count,
                                     restartInterval: scan.restartInterval, stride: stride, states: states)
        while index.encoded().count > limit {
            guard index.stride < frame.mcusAcross else {
                throw TesseraError.unsupported(path: name, feature: "an entropy index of a file this small (one"
                                               + " state per row of MCUs takes more than 0.5% of it)")
            }
            index = index.thinned()
        }
        return index
    }

    /// The same index with every other state of each row: twice the stride.
    private func thinned() -> JPEGEntropyIndex {
        let perRow = statesPerRow
        let kept = states.indices.filter { ($0 % perRow) % 2 == 0 }.map { states[$0] }
        return JPEGEntropyIndex(key: key, dataOffset: dataOffset, mcusAcross: mcusAcross, mcusDown: mcusDown,
                                componentCount: componentCount, restartInterval: restartInterval, stride: stride * 2,
                                states: kept)
    }

    /// The index of `states`, recorded every `stride` MCUs of each of `mcusDown` rows.
    init(key: Key, dataOffset: Int, mcusAcross: Int, mcusDown: Int, componentCount: Int, restartInterval: Int,
         stride: Int, states: [JPEGScanState.Resumable]) {
        var writer = ByteWriter(), rows: [RowStart] = []
        var offset = dataOffset, predictions = SIMD4<Int32>()
        let perRow = Self.statesPerRow(mcusAcross: mcusAcross, stride: stride)
        for (number, state) in states.enumerated() {
            if number % perRow == 0 {
                // A row's first record is coded from the row above's first, so each row's start follows from the
                // first records alone.
                if number > 0 {
                    offset = states[number - perRow].reader.offset
                    predictions = states[number - perRow].predictions
                }
                rows.append(RowStart(position: writer.bytes.count, offset: offset, predictions: predictions))
            }
            let reader = state.reader, whole = !reader.isBitPosition
            writer.u8(UInt8(reader.skip) | (whole ? 8 : 0))
            writer.signed(reader.offset - offset)
            offset = reader.offset
            if whole {
                writer.u64(reader.buffer)
                writer.u8(UInt8(reader.count))
                writer.u8(UInt8(reader.padding))
                writer.u8(reader.marker ?? 0xFF)
            }
            for component in 0..<componentCount {
                writer.signed(Int(state.predictions[component]) - Int(predictions[component]))
            }
            predictions = state.predictions
        }
        self.init(key: key, dataOffset: dataOffset, mcusAcross: mcusAcross, mcusDown: mcusDown,
                  componentCount: componentCount, restartInterval: restartInterval, stride: stride,
                  records: writer.bytes[...], rows: rows)
    }

    private init(key: Key, dataOffset: Int, mcusAcross: Int, mcusDown: Int, componentCount: Int, restartInterval: Int,
                 stride: Int, records: ArraySlice<UInt8>, rows: [RowStart]) {
        self.key = key
        self.dataOffset = dataOffset
        self.mcusAcross = mcusAcross
        self.mcusDown = mcusDown
        self.componentCount = componentCount
        self.restartInterval = restartInterval
        self.stride = stride
        self.records = records
        self.rows = rows
    }

    /// The index in its file format.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes = Self.magic
        writer.u16(Self.version)
        writer.u64(UInt64(key.size))
        writer.u64(key.modified.bitPattern)
        writer.u64(UInt64(dataOffset))
        writer.u32(UInt32(mcusAcross))
        writer.u32(UInt32(mcusDown))
        writer.u8(UInt8(componentCount))
        writer.u32(UInt32(restartInterval))
        writer.u32(UInt32(stride))
        writer.u32(UInt32(mcusDown * statesPerRow))
        for (row, start) in rows.enumerated() {
            writer.varint(UInt64((row + 1 < rows.count ? rows[row + 1].position : records.count) - start.position))
        }
        writer.bytes += records
        writer.u32(writer.bytes.withUnsafeBufferPointer { Self.crc($0) })
        return writer.bytes
    }

    /// Parses an index file; throws `corrupt` for anything but an intact index of this version.
    public init(decoding file: [UInt8], name: String) throws {
        self = try file.withUnsafeBufferPointer { try Self.parse($0, of: file, name: name) }
    }

    /// The index in `bytes`, the contents of `file`, whose records it keeps as a slice of `file`.
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, of file: [UInt8], name: String) throws
        -> JPEGEntropyIndex {
        func damaged(_ detail: String) -> TesseraError { .corrupt(path: name, detail: "the entropy index \(detail)") }
        guard bytes.count >= 4 + 2 + 8 * 4 + 4 * 5 + 1 + 4, bytes.starts(with: Self.magic) else {
            throw damaged("is not one, or is cut short")
        }
        let body = UnsafeBufferPointer(rebasing: bytes[..<(bytes.count - 4)])
        var trailer = ByteParser(bytes: UnsafeBufferPointer(rebasing: bytes[body.count...]))
        guard trailer.u32() == Self.crc(body) else { throw damaged("fails its checksum") }
        var parser = ByteParser(bytes: body)
        parser.position = 4
        guard parser.u16() == Self.version else { throw damaged("is of another version") }
        let size = Int(truncatingIfNeeded: parser.u64()), modified = Double(bitPattern: parser.u64())
        let dataOffset = Int(truncatingIfNeeded: parser.u64()), across = Int(parser.u32()), down = Int(parser.u32())
        let components = Int(parser.u8()), interval = Int(parser.u32()), stride = Int(parser.u32())
        let count = Int(parser.u32())
        let (states, overflow) = down.multipliedReportingOverflow(by: Self.statesPerRow(mcusAcross: across, stride: stride))
        guard (1...4).contains(components), size >= 0, dataOffset >= 0, across > 0, down > 0, stride > 0, !overflow,
              count == states, count <= bytes.count else {
            throw damaged("describes no image")
        }
        // The rows' lengths, then their first records, which give each row's start; the rest of the records are
        // checked row by row as reads parse them.
        var lengths: [Int] = []
        lengths.reserveCapacity(down)
        for _ in 0..<down { lengths.append(Int(truncatingIfNeeded: parser.varint())) }
        guard !parser.overran, lengths.allSatisfy({ (0...body.count).contains($0) }) else { throw damaged("is malformed") }
        let records = UnsafeBufferPointer(rebasing: body[parser.position...])
        guard lengths.reduce(0, +) == records.count else { throw damaged("is malformed") }
        var rows: [RowStart] = []
        rows.reserveCapacity(down)
        var position = 0, offset = dataOffset, predictions = SIMD4<Int32>()
        for length in lengths {
            rows.append(RowStart(position: position, offset: offset, predictions: predictions))
            var first = ByteParser(bytes: UnsafeBufferPointer(rebasing: records[position..<(position + length)]))
            _ = Self.record(&first, offset: &offset, predictions: &predictions, components: components)
            guard !first.overran else { throw damaged("is malformed") }
            position += length
        }
        return JPEGEntropyIndex(key: Key(size: size, modified: modified), dataOffset: dataOffset, mcusAcross: across,
                                mcusDown: down, componentCount: components, restartInterval: interval, stride: stride,
                                records: file[(body.count - records.count)..<body.count], rows: rows)
    }

    /// The reader's position in the record at the parser, advanced past it; `offset` and `predictions` are the
    /// previous record's values (its fields are deltas from them) and become this one's. Sums wrap rather than trap:
    /// a hostile file's offsets are refused by the check after them.
    private static func record(_ parser: inout ByteParser, offset: inout Int, predictions: inout SIMD4<Int32>,
                               components: Int) -> JPEGEntropyReader.Snapshot {
        let flags = parser.u8()
        offset &+= parser.signed()
        var reader = JPEGEntropyReader.Snapshot(offset: offset, skip: Int(flags & 7))
        if flags & 8 != 0 {
            reader.buffer = parser.u64()
            reader.count = Int(parser.u8())
            reader.padding = Int(parser.u8())
            let marker = parser.u8()
            reader.marker = marker == 0xFF ? nil : marker
        }
        // The deltas are gathered into a vector and added at once: setting one lane of the vector at a time stalls
        // on every record (a narrow store read back wide).
        func delta(_ component: Int) -> Int32 { component < components ? Int32(truncatingIfNeeded: parser.signed()) : 0 }
        predictions &+= SIMD4(delta(0), delta(1), delta(2), delta(3))
        return reader
    }

    /// The state saved before unit `position` of a scan whose restart interval is `interval`, once the unit has
    /// started: after `position + 1` calls of `JPEGScanState.startUnit`.
    private static func resumable(reader: JPEGEntropyReader.Snapshot, predictions: SIMD4<Int32>, position: Int,
                                  interval: Int) -> JPEGScanState.Resumable {
        guard interval > 0 else {
            return JPEGScanState.Resumable(reader: reader, predictions: predictions, restartsLeft: 0, nextRestart: 0,
                                           started: false)
        }
        return JPEGScanState.Resumable(reader: reader, predictions: predictions,
                                       restartsLeft: (interval - (position + 1) % interval) % interval,
                                       nextRestart: position / interval, started: true)
    }

    private static func crc(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        UInt32(crc32(0, bytes.baseAddress, uInt(bytes.count)))
    }

    // MARK: Beside the pyramid cache

    /// Where the index of the JPEG at `path` (with `key`) is kept in the cache folder `folder`.
    public static func location(of path: String, key: Key, folder: String) -> String {
        PyramidCache.fileStem(in: folder, path: path, modified: Date(timeIntervalSince1970: key.modified),
                              size: key.size) + "." + fileExtension
    }

    /// The index kept in `folder` for the JPEG at `path` whose scans are `scans`, or nil when there is none or it
    /// cannot be trusted (stale, cut short, damaged, another version, another scan).
    static func load(for path: String, scans: JPEGScanIndex, folder: String) -> JPEGEntropyIndex? {
        guard let key = try? Key(path: path) else { return nil }
        let file = location(of: path, key: key, folder: folder)
        var status = stat()
        guard stat(file, &status) == 0,
              let index = try? parsed.value(for: "\(file)\u{0}\(status.st_size)\u{0}\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)",
                                           make: {
                  let bytes = try CFile(path: file, mode: "rb").read(Int(status.st_size))
                  return try JPEGEntropyIndex(decoding: bytes, name: path)
              }),
              index.key == key, index.describes(scans) else { return nil }
        return index
    }

    /// Index files parsed, by file, size and modification time (a file written again is parsed again): a server's
    /// many tiles of one JPEG read its index once. At most 64 MiB of indexes, about 800 images of 100 MP.
    private static let parsed = SharedCache<String, JPEGEntropyIndex>(byteLimit: 64 << 20) { _, index in
        256 + index.records.count + index.rows.count * MemoryLayout<RowStart>.stride
    }

    /// What `loadOrBuild` found.
    public enum Outcome: String, Sendable {
        case reused = "reused"
        case built = "built"
        case rebuilt = "rebuilt (the one kept was stale or damaged)"
    }

    /// The JPEG at `path`'s index in `folder`: the one kept when it can be trusted, else built (one pass over the
    /// file, on `workers` threads) and written there under a temporary name renamed into place. Returns it, its file
    /// and what happened.
    public static func loadOrBuild(for path: String, folder: String, workers: Int = availableCores()) throws
        -> (index: JPEGEntropyIndex, file: String, outcome: Outcome) {
        let key = try Key(path: path)
        let file = location(of: path, key: key, folder: folder)
        let existed = FileManager.default.fileExists(atPath: file)
        // An index kept is checked against the first scan's header alone, as a read through it does: walking the
        // whole file to its end took 90 ms at 1 GP.
        if existed, let index = load(for: path, scans: try JPEGScanIndex(input: .file(path: path), firstScanOnly: true),
                                     folder: folder) {
            return (index, file, .reused)
        }
        let index = try build(input: .file(path: path), key: key, workers: workers)
        try index.write(to: file, folder: folder)
        return (index, file, existed ? .rebuilt : .built)
    }

    /// Writes the index to `file` in `folder` (made when missing) under a temporary name renamed into place.
    func write(to file: String, folder: String) throws {
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw TesseraError.io(path: folder, detail: "cannot create the folder")
        }
        let output = try AtomicFile(path: file)
        let bytes = encoded()
        guard fwrite(bytes, 1, bytes.count, output.handle) == bytes.count else {
            throw TesseraError.io(path: file, detail: "write failed")
        }
        try output.commit()
    }
}

/// Little-endian fields and varints read from bytes in memory; reading past their end gives zeros and sets
/// `overran`.
private struct ByteParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    private(set) var overran = false

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    @inline(__always)
    mutating func u8() -> UInt8 {
        guard position < bytes.count else {
            overran = true
            return 0
        }
        position &+= 1
        return bytes[position &- 1]
    }

    mutating func u16() -> UInt16 { UInt16(u8()) | UInt16(u8()) << 8 }
    mutating func u32() -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(u8()) << UInt32(8 * $1) } }
    mutating func u64() -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(u8()) << UInt64(8 * $1) } }

    @inline(__always)
    mutating func varint() -> UInt64 {
        var value: UInt64 = 0
        for shift in Swift.stride(from: 0, to: 64, by: 7) {
            let byte = u8()
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte < 0x80 { return value }
        }
        overran = true
        return value
    }

    @inline(__always)
    mutating func signed() -> Int {
        let value = varint()
        return Int(truncatingIfNeeded: value >> 1) ^ -Int(truncatingIfNeeded: value & 1)
    }
}
