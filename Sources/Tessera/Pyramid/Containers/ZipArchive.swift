import CZlib
import Synchronization

/// A zip file read back: its central directory, read once, and any entry's bytes, read by byte ranges when asked
/// for. This is how a pyramid in one zip (`ZipContainer`, or a folder packed by any zip tool: stored or deflated
/// entries, Zip64 past 65,535 entries or 4 GiB) is read as tiles, from a local file or a URL. Encrypted entries
/// and compression methods other than stored and deflate are refused when read; an entry's bytes are checked
/// against its CRC-32 the first time they are read (a tile a server sends again and again costs its CRC once: it
/// was 7% of a server's time sending a zip's tiles).
struct ZipArchive: Sendable {
    /// One file in the archive, as the central directory lists it.
    struct Entry: Sendable {
        /// Where its local header starts, in bytes from the start of the archive.
        let offset: Int
        /// Its bytes as stored, and once inflated.
        let storedSize: Int
        let size: Int
        /// 0 stored, 8 deflated.
        let method: UInt16
        /// The general purpose flags (bit 0: encrypted).
        let flags: UInt16
        let crc: UInt32
        /// Its place in the directory, from 0.
        let index: Int
    }

    /// The archive's bytes: a file, or a URL read by ranges.
    private let file: PositionedInput
    /// Every entry by its path in the archive (`/`-separated, as stored).
    let entries: [String: Entry]
    /// What the directory, and each entry read, must fit in.
    private let budget: MemoryBudget
    /// The memory the directory holds, read and indexed: about twice its bytes, in bytes.
    let heldBytes: Int
    /// Bit `index` set once the entry's bytes have matched its CRC-32.
    private let checked: Checked

    /// The entries checked so far, one bit each.
    private final class Checked: Sendable {
        let bits: Mutex<[UInt64]>

        init(count: Int) { bits = Mutex([UInt64](repeating: 0, count: (count + 63) / 64)) }

        func contains(_ index: Int) -> Bool { bits.withLock { $0[index >> 6] & 1 << (index & 63) != 0 } }

        func insert(_ index: Int) { bits.withLock { $0[index >> 6] |= 1 << (index & 63) } }
    }

    /// Whether `header` (a file's first bytes) starts like a zip: a local file header, or the end record of an empty
    /// archive.
    static func starts(_ header: some Collection<UInt8>) -> Bool {
        let bytes = Array(header.prefix(4))
        return bytes == [0x50, 0x4B, 0x03, 0x04] || bytes == [0x50, 0x4B, 0x05, 0x06]
    }

    /// What errors call the archive: its path or URL.
    var name: String { file.input.name }

    /// Reads the central directory of the zip `input`; the directory, read and indexed (about twice its bytes),
    /// and each entry read must fit in `budget`.
    init(input: ImageInput, budget: MemoryBudget) throws {
        let file = try PositionedInput(input)
        self.file = file
        self.budget = budget
        let name = input.name, total = file.byteCount
        let tail = try file.read(at: max(0, total - Self.endRecordReach), count: min(total, Self.endRecordReach))
        guard let end = Self.endRecord(in: tail) else {
            throw TesseraError.corrupt(path: name, detail: "no zip end record (the file is cut short, or not a zip)")
        }
        let endOffset = total - tail.count + end
        var count = Int(tail.u16(at: end + 10)), directorySize = Int(tail.u32(at: end + 12))
        var directoryOffset = Int(tail.u32(at: end + 16))
        // Zip64: the locator just before the end record gives the Zip64 end record, whose counts are the real ones.
        if endOffset >= 20, count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
            let locator = try file.read(at: endOffset - 20, count: 20)
            guard locator.count == 20, locator.u32(at: 0) == 0x0706_4B50 else {
                throw TesseraError.corrupt(path: name, detail: "a Zip64 archive without its Zip64 end record locator")
            }
            let record64 = try file.read(at: Self.checked(locator.u64(at: 8), name), count: 56)
            guard record64.count == 56, record64.u32(at: 0) == 0x0606_4B50 else {
                throw TesseraError.corrupt(path: name, detail: "the Zip64 end record is not where its locator says")
            }
            count = try Self.checked(record64.u64(at: 32), name)
            directorySize = try Self.checked(record64.u64(at: 40), name)
            directoryOffset = try Self.checked(record64.u64(at: 48), name)
        }
        heldBytes = 2 * directorySize
        try budget.check(heldBytes, for: "the zip's directory, read and indexed", path: name)
        guard directoryOffset + directorySize <= total, count <= directorySize / 46 else {
            throw TesseraError.truncated(path: name, detail: "before the end of its zip directory")
        }
        let directory = try file.read(at: directoryOffset, count: directorySize)
        guard directory.count == directorySize else {
            throw TesseraError.truncated(path: name, detail: "before the end of its zip directory")
        }
        entries = try Self.entries(in: directory, count: count, archiveSize: total, name: name)
        checked = Checked(count: count)
    }

    /// The bytes of the entry at `path`, inflated and checked; nil when the archive has no such entry.
    func data(of path: String) throws -> [UInt8]? {
        guard let entry = entries[path] else { return nil }
        let name = self.name + "/" + path
        guard entry.flags & 1 == 0 else {
            throw TesseraError.unsupported(path: name, feature: "an encrypted zip entry")
        }
        guard entry.method == 0 || entry.method == 8 else {
            throw TesseraError.unsupported(path: name, feature: "zip compression method \(entry.method)")
        }
        try budget.check(entry.storedSize + entry.size, for: "a zip entry, as stored and inflated", path: name)
        // The local header, its name and (usually) its extra field, and the data in one read; a longer extra
        // field than guessed costs a second.
        let guess = 30 + path.utf8.count + 32
        var bytes = try file.read(at: entry.offset, count: guess + entry.storedSize)
        guard bytes.count >= 30, bytes.u32(at: 0) == 0x0403_4B50 else {
            throw TesseraError.corrupt(path: name, detail: "no local header where the zip directory places it")
        }
        let start = 30 + Int(bytes.u16(at: 26)) + Int(bytes.u16(at: 28))
        if start + entry.storedSize > bytes.count {
            bytes = try file.read(at: entry.offset + start, count: entry.storedSize)
        } else {
            bytes = Array(bytes[start..<start + entry.storedSize])
        }
        guard bytes.count == entry.storedSize else {
            throw TesseraError.truncated(path: name, detail: "(the archive ends inside the entry)")
        }
        let data = entry.method == 0 ? bytes : try Self.inflated(bytes, size: entry.size, name: name)
        if !checked.contains(entry.index) {
            let crc = data.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
            guard crc == entry.crc else {
                throw TesseraError.corrupt(path: name, detail: "its bytes do not match the zip's CRC-32")
            }
            checked.insert(entry.index)
        }
        return data
    }

    /// One entry as its local header, read walking the zip from its start, gives it.
    struct LocalEntry {
        /// Where its local header starts, in bytes.
        let offset: Int
        let name: [UInt8]
        let crc: UInt32
        /// Its bytes as stored.
        let storedSize: Int
        /// Where its data ends (the next header starts); nil when its sizes follow its data (bit 3 of its flags, a
        /// zip written as a stream), so that the next header's place is not known from this one.
        let end: Int?
    }

    /// The first `limit` entries of `file` from their local headers, with no read of the directory: up to a header
    /// that does not read whole, or whose data runs past the end (an entry cut short), or after an entry whose
    /// sizes follow its data. What a killed build's partial zip, whose directory was never written, holds, and the
    /// names of a zip's first entries.
    static func localEntries(of file: PositionedInput, limit: Int = .max) throws -> [LocalEntry] {
        var entries: [LocalEntry] = [], offset = 0
        while entries.count < limit, case let header = try file.read(at: offset, count: 30), header.count == 30,
              header.u32(at: 0) == 0x0403_4B50 {
            let nameLength = Int(header.u16(at: 26)), storedSize = Int(header.u32(at: 18))
            let name = try file.read(at: offset + 30, count: nameLength)
            guard name.count == nameLength else { break }
            let sizesFollow = header.u16(at: 6) & 8 != 0 && storedSize == 0 && name.last != UInt8(ascii: "/")
            let end = offset + 30 + nameLength + Int(header.u16(at: 28)) + storedSize
            guard end <= file.byteCount else { break }
            entries.append(LocalEntry(offset: offset, name: name, crc: header.u32(at: 14), storedSize: storedSize,
                                      end: sizesFollow ? nil : end))
            if sizesFollow { break }
            offset = end
        }
        return entries
    }

    /// How far from the end the end record may start: its 22 bytes and a comment of at most 65,535.
    private static let endRecordReach = 22 + 0xFFFF

    /// Where in `tail` (the archive's last bytes) its end record starts: the last signature whose comment length
    /// reaches exactly to the end.
    static func endRecord(in tail: [UInt8]) -> Int? {
        guard tail.count >= 22 else { return nil }
        for start in stride(from: tail.count - 22, through: 0, by: -1)
        where tail[start] == 0x50 && tail[start + 1] == 0x4B && tail[start + 2] == 0x05 && tail[start + 3] == 0x06 {
            if start + 22 + Int(tail.u16(at: start + 20)) == tail.count { return start }
        }
        return nil
    }

    /// The `count` entries of the central directory `directory`, Zip64 sizes and offsets read from their extra
    /// fields; each must lie inside an archive of `archiveSize` bytes.
    private static func entries(in directory: [UInt8], count: Int, archiveSize: Int, name: String) throws
        -> [String: Entry] {
        var entries: [String: Entry] = [:]
        entries.reserveCapacity(count)
        var at = 0
        for index in 0..<count {
            let damaged = { TesseraError.corrupt(path: name, detail: "the zip directory's entry \(index + 1) is damaged") }
            guard at + 46 <= directory.count, directory.u32(at: at) == 0x0201_4B50 else { throw damaged() }
            let nameLength = Int(directory.u16(at: at + 28)), extraLength = Int(directory.u16(at: at + 30))
            let commentLength = Int(directory.u16(at: at + 32))
            let next = at + 46 + nameLength + extraLength + commentLength
            guard next <= directory.count else { throw damaged() }
            var size = UInt64(directory.u32(at: at + 24)), storedSize = UInt64(directory.u32(at: at + 20))
            var offset = UInt64(directory.u32(at: at + 42))
            // The Zip64 extra field holds, in this order, each of those three that is 0xFFFFFFFF above.
            var extra = at + 46 + nameLength
            let extraEnd = extra + extraLength
            while extra + 4 <= extraEnd {
                let id = directory.u16(at: extra), length = Int(directory.u16(at: extra + 2))
                if id == 1 {
                    var field = extra + 4
                    if size == 0xFFFF_FFFF, field + 8 <= extraEnd { size = directory.u64(at: field); field += 8 }
                    if storedSize == 0xFFFF_FFFF, field + 8 <= extraEnd {
                        storedSize = directory.u64(at: field)
                        field += 8
                    }
                    if offset == 0xFFFF_FFFF, field + 8 <= extraEnd { offset = directory.u64(at: field) }
                }
                extra += 4 + length
            }
            let path = String(decoding: directory[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
            let entry = Entry(offset: try checked(offset, name), storedSize: try checked(storedSize, name),
                              size: try checked(size, name), method: directory.u16(at: at + 10),
                              flags: directory.u16(at: at + 8), crc: directory.u32(at: at + 16), index: index)
            guard entry.offset + 30 + entry.storedSize <= archiveSize else {
                throw TesseraError.truncated(path: name, detail: "(its zip entry \(path) reaches past the end)")
            }
            entries[path] = entry
            at = next
        }
        return entries
    }

    /// `value` as an Int, when a zip of this world could hold it (below 2^62).
    private static func checked(_ value: UInt64, _ name: String) throws -> Int {
        guard value < 1 << 62 else {
            throw TesseraError.corrupt(path: name, detail: "a zip size or offset out of range")
        }
        return Int(value)
    }

    /// Raw deflate data (RFC 1951) inflated to exactly `size` bytes.
    private static func inflated(_ deflated: [UInt8], size: Int, name: String) throws -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw TesseraError.io(path: name, detail: "cannot start inflating")
        }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: size)
        let status = deflated.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out -> Int32 in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return inflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END, Int(stream.total_out) == size else {
            throw TesseraError.corrupt(path: name, detail: "its deflated bytes do not inflate to its size")
        }
        return output
    }
}

private extension [UInt8] {
    /// Little-endian integers at byte `at` (the caller has checked the bytes are there).
    func u16(at: Int) -> UInt16 { UInt16(self[at]) | UInt16(self[at + 1]) << 8 }
    func u32(at: Int) -> UInt32 { UInt32(u16(at: at)) | UInt32(u16(at: at + 2)) << 16 }
    func u64(at: Int) -> UInt64 { UInt64(u32(at: at)) | UInt64(u32(at: at + 4)) << 32 }
}
