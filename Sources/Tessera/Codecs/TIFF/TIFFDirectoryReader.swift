/// Reads TIFF image file directories (IFDs) from the file's bytes, classic TIFF or BigTIFF, in either byte order:
/// the number of pages, and the fields an image's properties (its first directory's `TIFFLayout`), a walk of a
/// pyramid's levels (`TIFFPyramid`) and the index of their JPEG tiles (`StoredTileReader.Index`) need. libtiff
/// reads a directory whole and sorts its table of known fields twice doing so (once for the directory, once for its
/// codec's): about 100,000 instructions a directory, half of what a six-level pyramid's first info.json cost.
/// Pixels, and every field a decode needs, are still read by libtiff (`TIFFFile`); this reads no more than a
/// directory's entries and the values asked of it.
///
/// Anything that does not parse (a header not TIFF's, a directory or values past the file's end, a count of
/// values larger than `maxValueBytes` allows, a failed read) is nil, never an error: a walk ends at the directory
/// that cannot be read, as it did where libtiff could not read one. Nothing past the file's end is read or
/// allocated for, whatever count a damaged directory claims.
struct TIFFDirectoryReader {
    /// Reads `count` bytes from byte `offset` of the file: fewer only at its end, none past it.
    typealias Read = (_ offset: UInt64, _ count: Int) throws -> [UInt8]

    /// One directory's entries (the first entry of a tag counts, as in libtiff) and the offset of the next.
    /// Tags are libtiff's constants (`TIFFTAG_IMAGEWIDTH`); its pseudo-tags, past 16 bits, are never in a file.
    struct Fields {
        /// Where the next directory of the chain is, 0 at its end.
        let next: UInt64
        private let reader: TIFFDirectoryReader
        /// The directory's entries as stored, 12 or 20 bytes each, then the next directory's offset.
        private let entries: [UInt8]

        fileprivate init(next: UInt64, reader: TIFFDirectoryReader, entries: [UInt8]) {
            self.next = next
            self.reader = reader
            self.entries = entries
        }

        /// How many values the entry for `tag` holds, or nil without one.
        func count(of tag: Int32) -> Int? {
            guard let entry = entry(tag) else { return nil }
            return entry.count <= UInt64(Int.max) ? Int(entry.count) : nil
        }

        /// The first value of an unsigned integer field (BYTE, SHORT, LONG, LONG8, IFD or IFD8), or nil. Read from
        /// the entry itself when its values fit there (a walk asks a dozen such fields of each directory), with no
        /// array made.
        func integer(_ tag: Int32) -> UInt64? {
            guard let entry = entry(tag), entry.count > 0, let size = Self.integerSize(entry.type) else { return nil }
            if isInline(entry, size: size) { return reader.unsigned(entries, at: entry.field, size: size) }
            return values(of: entry, size: size, count: 1).map { reader.unsigned($0, at: 0, size: size) }
        }

        /// The first `count` values (all of them when nil) of an unsigned integer field; nil without the field,
        /// with fewer values, another type, or values that cannot be read.
        func integers(_ tag: Int32, count: Int? = nil) -> [UInt64]? { storedIntegers(tag, count: count).map(Array.init) }

        /// `integers`, kept as the file stores them and each read when asked for: a level's tile offsets and byte
        /// counts are thousands of values, of which a viewer's requests read a few.
        func storedIntegers(_ tag: Int32, count: Int? = nil) -> Integers? {
            guard let entry = entry(tag), let size = Self.integerSize(entry.type) else { return nil }
            let wanted = count ?? self.count(of: tag) ?? -1
            guard wanted >= 0, UInt64(wanted) <= entry.count,
                  let bytes = values(of: entry, size: size, count: wanted) else { return nil }
            return Integers(bytes: bytes, size: size, isBigEndian: reader.isBigEndian)
        }

        /// The bytes of a field of 8-bit values (BYTE, ASCII, SBYTE or UNDEFINED: JPEGTables), or nil.
        func bytes(_ tag: Int32) -> [UInt8]? {
            guard let entry = entry(tag), [1, 2, 6, 7].contains(entry.type), entry.count <= UInt64(Int.max) else {
                return nil
            }
            return values(of: entry, size: 1, count: Int(entry.count))
        }

        /// An entry: its type, its count and where its value field (inline values, or their offset) starts.
        private func entry(_ tag: Int32) -> (type: UInt16, count: UInt64, field: Int)? {
            // An entry's count and value field, and the next directory's offset after the entries, are words.
            let word = reader.wordSize, entrySize = reader.entrySize, end = entries.count - word
            // A directory's few entries are searched in order, each tag compared as stored: no table is built for
            // a dozen lookups.
            guard let tag = UInt16(exactly: tag) else { return nil }
            let stored = reader.isBigEndian ? tag.bigEndian : tag.littleEndian
            guard let at = entries.withUnsafeBytes({ raw in
                stride(from: 0, to: end, by: entrySize).first {
                    raw.loadUnaligned(fromByteOffset: $0, as: UInt16.self) == stored
                }
            }) else { return nil }
            return (UInt16(reader.unsigned(entries, at: at + 2, size: 2)),
                    reader.unsigned(entries, at: at + 4, size: word), at + 4 + word)
        }

        /// The first `count` values, `size` bytes each, of `entry`: from its value field when all its values fit
        /// there, else from the offset it holds.
        private func values(of entry: (type: UInt16, count: UInt64, field: Int), size: Int, count: Int) -> [UInt8]? {
            let (bytes, overflow) = count.multipliedReportingOverflow(by: size)
            guard !overflow, bytes <= reader.maxValueBytes else { return nil }
            if isInline(entry, size: size) { return Array(entries[entry.field..<entry.field + bytes]) }
            let offset = reader.unsigned(entries, at: entry.field, size: reader.wordSize)
            return reader.bytes(at: offset, count: bytes)
        }

        /// Whether all of `entry`'s values, `size` bytes each, are in its value field (else it holds their offset).
        private func isInline(_ entry: (type: UInt16, count: UInt64, field: Int), size: Int) -> Bool {
            entry.count <= UInt64(reader.wordSize / size)
        }

        /// The bytes of each value of an unsigned integer type (BYTE, SHORT, LONG, IFD, LONG8 or IFD8); nil for others.
        private static func integerSize(_ type: UInt16) -> Int? {
            switch type {
            case 1: 1
            case 3: 2
            case 4, 13: 4
            case 16, 18: 8
            default: nil
            }
        }
    }

    /// Unsigned integers as a field stores them: `size` bytes each (1, 2, 4 or 8), in the file's byte order.
    struct Integers: RandomAccessCollection, Sendable {
        /// The values' bytes as stored.
        let bytes: [UInt8]
        fileprivate let size: Int
        fileprivate let isBigEndian: Bool

        var startIndex: Int { 0 }
        var endIndex: Int { bytes.count / size }

        subscript(index: Int) -> UInt64 {
            TIFFDirectoryReader.unsigned(bytes, at: index * size, size: size, bigEndian: isBigEndian)
        }
    }

    private let read: Read
    /// The file's size in bytes.
    private let byteCount: Int
    fileprivate let isBigEndian: Bool
    /// BigTIFF: 8-byte counts and offsets, 20-byte entries.
    fileprivate let isBig: Bool
    /// The size of an entry's count and value field, and of a directory's next offset, in bytes.
    fileprivate var wordSize: Int { isBig ? 8 : 4 }
    /// The size of a directory's entry count, in bytes.
    private var countSize: Int { isBig ? 8 : 2 }
    /// The size of each entry (a tag, a type, a count, a value field), in bytes.
    fileprivate var entrySize: Int { 4 + 2 * wordSize }
    /// Where the first directory (page 0) is.
    let firstOffset: UInt64
    /// The most bytes the values of one field may take (a level's tile offsets are its largest).
    fileprivate let maxValueBytes: Int

    /// The largest number of entries a directory may have, as libtiff allows.
    private static let maxEntries: UInt64 = 0xFFFF

    /// A reader of the TIFF of `byteCount` bytes that `read` reads, or nil when its header is not TIFF's or cannot
    /// be read.
    init?(byteCount: Int, maxValueBytes: Int, read: @escaping Read) {
        guard byteCount >= 8, let header = try? read(0, min(16, byteCount)), header.count >= 8 else { return nil }
        switch (header[0], header[1]) {
        case (0x49, 0x49): isBigEndian = false
        case (0x4D, 0x4D): isBigEndian = true
        default: return nil
        }
        self.read = read
        self.byteCount = byteCount
        self.maxValueBytes = maxValueBytes
        let order = isBigEndian
        func unsigned(at: Int, size: Int) -> UInt64 { Self.unsigned(header, at: at, size: size, bigEndian: order) }
        switch unsigned(at: 2, size: 2) {
        case 42:
            isBig = false
            firstOffset = unsigned(at: 4, size: 4)
        case 43:
            // BigTIFF: the offsets' size (8) and a reserved 0, then the first directory's 8-byte offset.
            guard header.count == 16, unsigned(at: 4, size: 2) == 8, unsigned(at: 6, size: 2) == 0 else { return nil }
            isBig = true
            firstOffset = unsigned(at: 8, size: 8)
        default:
            return nil
        }
    }

    /// A reader of `file`'s directories (which it keeps open), or nil when its header is not TIFF's.
    init?(file: any RandomAccessFile, maxValueBytes: Int) {
        self.init(byteCount: file.byteCount, maxValueBytes: maxValueBytes) { offset, count in
            try [UInt8](unsafeUninitializedCapacity: count) { buffer, got in
                got = try file.read(into: UnsafeMutableRawBufferPointer(buffer), at: Int(offset), readAhead: 0)
            }
        }
    }

    /// A reader of the directories of the TIFF that `bytes` are, or nil when their header is not TIFF's.
    init?(bytes: [UInt8], maxValueBytes: Int) {
        self.init(byteCount: bytes.count, maxValueBytes: maxValueBytes) { offset, count in
            Array(bytes[Int(offset)..<Int(offset) + count])
        }
    }

    /// The directory at byte `offset`, or nil when it cannot be read (none at 0, no entries, more than libtiff
    /// allows, or not all in the file).
    func directory(at offset: UInt64) -> Fields? {
        guard offset > 0, let head = bytes(at: offset, count: countSize) else { return nil }
        let count = unsigned(head, at: 0, size: countSize)
        guard count > 0, count <= Self.maxEntries else { return nil }
        let length = Int(count) * entrySize + wordSize
        guard let body = bytes(at: offset + UInt64(countSize), count: length) else { return nil }
        return Fields(next: unsigned(body, at: length - wordSize, size: wordSize), reader: self, entries: body)
    }

    /// How many directories (pages) the chain from the first holds, as libtiff counts them: those whose entry
    /// count and next offset read, up to a directory that does not, one already counted (a chain that loops) or
    /// `maxPages`. Two small reads a directory, of its first and last bytes, not its entries.
    var pageCount: Int {
        var counted = Set<UInt64>(), offset = firstOffset
        while offset > 0, counted.count < Self.maxPages, let head = bytes(at: offset, count: countSize) {
            let entries = unsigned(head, at: 0, size: countSize)
            guard entries <= Self.maxEntries,
                  let next = bytes(at: offset + UInt64(countSize) + entries * UInt64(entrySize), count: wordSize),
                  counted.insert(offset).inserted
            else { break }
            offset = unsigned(next, at: 0, size: wordSize)
        }
        return counted.count
    }

    /// The most pages `pageCount` counts: a million, more than any real file has.
    static let maxPages = 1 << 20

    /// `count` bytes from `offset`, or nil when they are not all in the file or the read fails.
    fileprivate func bytes(at offset: UInt64, count: Int) -> [UInt8]? {
        guard count >= 0, offset <= UInt64(byteCount), UInt64(count) <= UInt64(byteCount) - offset,
              let bytes = try? read(offset, count), bytes.count == count else { return nil }
        return bytes
    }

    /// The unsigned integer of `size` bytes (1, 2, 4 or 8) at `at` in `bytes`, in the file's byte order.
    fileprivate func unsigned(_ bytes: [UInt8], at: Int, size: Int) -> UInt64 {
        Self.unsigned(bytes, at: at, size: size, bigEndian: isBigEndian)
    }

    fileprivate static func unsigned(_ bytes: [UInt8], at: Int, size: Int, bigEndian: Bool) -> UInt64 {
        precondition(at >= 0 && at + size <= bytes.count, "a TIFF value read past its bytes")
        return bytes.withUnsafeBytes { raw in
            switch size {
            case 1: return UInt64(raw[at])
            case 2: return UInt64(value(UInt16.self, raw, at, bigEndian))
            case 4: return UInt64(value(UInt32.self, raw, at, bigEndian))
            default: return value(UInt64.self, raw, at, bigEndian)
            }
        }
    }

    /// The `Value` stored at byte `at` of `raw` in the given byte order.
    private static func value<Value: FixedWidthInteger>(_: Value.Type, _ raw: UnsafeRawBufferPointer, _ at: Int,
                                                        _ bigEndian: Bool) -> Value {
        let stored = raw.loadUnaligned(fromByteOffset: at, as: Value.self)
        return bigEndian ? Value(bigEndian: stored) : Value(littleEndian: stored)
    }
}
